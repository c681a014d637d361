/**
 * Contract 15, CIMD fetch, attacked the way a hostile AI would choose its client_id: a URL that points at
 * the owner's machine, the LAN, a cloud metadata service, a name that resolves there (some of its answers
 * or all), a document that redirects, one that never ends, one too large, one that claims another
 * client_id. Loopback HTTP servers play the documents; a resolver is injected only to play DNS answers
 * this machine cannot get from a real resolver (a public name resolving to 10.x).
 */

import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../store/sqlite/index.js';
import { isPublicAddress } from './address.js';
import { Clients, OAuthError } from './clients.js';
import { fetchClientDocument, MetadataFetchError } from './fetch-document.js';

let server: Server;
let base: string;
let hits = 0;
const stalled: Array<() => void> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    const path = req.url ?? '/';
    if (path === '/redirect') {
      res.writeHead(302, { location: `${base}/good.json` });
      res.end();
    } else if (path === '/huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"pad":"${'x'.repeat(100 * 1024)}"}`);
    } else if (path === '/huge-chunked') {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 100; i++) res.write('x'.repeat(1024));
      res.end();
    } else if (path === '/slow') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"client_id":');
      stalled.push(() => res.end('null}'));
    } else if (path === '/other.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: 'https://claude.ai/oauth/client.json',
          redirect_uris: ['https://claude.ai/cb'],
        }),
      );
    } else if (path === '/no-redirects.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: `${base}/no-redirects.json` }));
    } else if (path === '/good.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: `${base}/good.json`,
          client_name: 'Good AI',
          redirect_uris: ['http://127.0.0.1/callback'],
          token_endpoint_auth_method: 'none',
        }),
      );
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const end of stalled) end();
  await new Promise<void>((r) => server.close(() => r()));
});

async function refusal(url: string, opts: Parameters<typeof fetchClientDocument>[1]): Promise<string> {
  try {
    await fetchClientDocument(new URL(url), opts);
  } catch (e) {
    expect(e).toBeInstanceOf(MetadataFetchError);
    return (e as Error).message;
  }
  throw new Error(`fetched ${url}`);
}

describe('which addresses are public', () => {
  it('refuses every special-purpose address and admits public ones', () => {
    for (const a of [
      '127.0.0.1',
      '10.2.3.4',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::127.0.0.1',
      '64:ff9b::a00:1',
      '224.0.0.1',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
    for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPublicAddress(a), a).toBe(true);
    }
  });
});

describe('[c15.ssrf] the CIMD fetch refuses what a hostile client_id aims at', () => {
  const strict = { allowLoopback: false };

  it('refuses loopback, private, link-local and metadata-service addresses before connecting', async () => {
    const before = hits;
    const port = new URL(base).port;
    expect(await refusal(`https://127.0.0.1:${port}/good.json`, strict)).toContain('not a public address');
    expect(await refusal('https://10.0.0.1/c.json', strict)).toContain(
      '10.0.0.1, which is not a public address',
    );
    expect(await refusal('https://[::1]/c.json', strict)).toContain('not a public address');
    expect(await refusal('https://169.254.169.254/latest/meta-data', strict)).toContain(
      'not a public address',
    );
    // A name that resolves to this machine (the system resolver's answer for localhost).
    expect(await refusal(`https://localhost:${port}/good.json`, strict)).toContain('not a public address');
    expect(hits).toBe(before);
  });

  it('refuses a name when any one of its addresses is private, however the resolver orders them', async () => {
    const resolve = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    expect(await refusal('https://evil.example/c.json', { allowLoopback: false, resolve })).toContain(
      'resolves to 10.0.0.5',
    );
    const mapped = async () => [{ address: '::ffff:169.254.169.254', family: 6 }];
    expect(await refusal('https://evil.example/c.json', { allowLoopback: false, resolve: mapped })).toContain(
      'not a public address',
    );
  });

  it('refuses plain http, and loopback http unless allow_loopback_metadata', async () => {
    expect(await refusal('http://example.com/c.json', strict)).toContain('https');
    expect(await refusal(`${base}/good.json`, strict)).toContain('https');
    // Even in development only the two loopback names: http://10.x stays refused.
    expect(await refusal('http://10.0.0.1/c.json', { allowLoopback: true })).toContain('https');
    const lying = async () => [{ address: '10.0.0.1', family: 4 }];
    expect(await refusal('http://localhost/c.json', { allowLoopback: true, resolve: lying })).toContain(
      'not a public address',
    );
  });

  it('connects to the address it checked, not to a second resolution', async () => {
    const port = new URL(base).port;
    let asked = 0;
    const resolve = async () => {
      asked++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const doc = (await fetchClientDocument(new URL(`http://localhost:${port}/good.json`), {
      allowLoopback: true,
      resolve,
    })) as Record<string, unknown>;
    expect(doc.client_name).toBe('Good AI');
    expect(asked).toBe(1);
  });

  it('does not follow a redirect', async () => {
    expect(await refusal(`${base}/redirect`, { allowLoopback: true })).toContain('redirect');
  });

  it('stops at 64 KiB, declared or streamed', async () => {
    expect(await refusal(`${base}/huge`, { allowLoopback: true })).toContain('larger than 65536 bytes');
    expect(await refusal(`${base}/huge-chunked`, { allowLoopback: true })).toContain(
      'larger than 65536 bytes',
    );
  });

  it('gives up on a document that never ends', async () => {
    expect(await refusal(`${base}/slow`, { allowLoopback: true, timeoutMs: 300 })).toContain(
      'did not arrive within',
    );
  });
});

describe('[c15.ssrf] a Client ID Metadata Document', () => {
  const store = new Store(join(mkdtempSync(join(tmpdir(), 'ogf-cimd-')), 'broker.db'));
  afterAll(() => store.close());
  const clients = new Clients({ store: store.oauth, allowLoopback: true });

  async function code(id: string): Promise<string> {
    try {
      await clients.get(id);
    } catch (e) {
      expect(e).toBeInstanceOf(OAuthError);
      return `${(e as OAuthError).code}: ${(e as Error).message}`;
    }
    throw new Error(`accepted ${id}`);
  }

  it('must name its own URL as client_id and list redirect_uris', async () => {
    expect(await code(`${base}/other.json`)).toBe(
      'invalid_client: client_id document: its client_id must equal the URL it was fetched from',
    );
    expect(await code(`${base}/no-redirects.json`)).toContain('redirect_uris must list');
    expect(await code(`${base}/redirect`)).toContain('redirect, which is not followed');
  });

  it('is read once and cached, with the host the owner will see', async () => {
    const before = hits;
    const info = await clients.get(`${base}/good.json`);
    expect(info).toMatchObject({ kind: 'cimd', host: new URL(base).host, client_name: 'Good AI' });
    await clients.get(`${base}/good.json`);
    expect(hits).toBe(before + 1);
  });
});
