/**
 * Contract 15, discovery: with OAuth on (`oauth.enabled`, or public_url), /mcp without a credential answers
 * 401 with `WWW-Authenticate: Bearer resource_metadata="<base>/.well-known/oauth-protected-resource/mcp"`,
 * and the two documents carry exactly the contract's fields. The Bearer tokens and capability URLs of
 * section 3 keep working beside OAuth; with OAuth off, none of it exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { httpClient } from './helpers/mcp.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

function postMcp(url: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(INIT),
  });
}

describe('[c15.discovery] OAuth discovery (contract 15)', () => {
  let d: RunningDaemon;
  let off: RunningDaemon;
  beforeAll(async () => {
    [d, off] = await Promise.all([startDaemon({ config: { oauth: { enabled: true } } }), startDaemon()]);
  });
  afterAll(async () => {
    await Promise.all([d?.stop(), off?.stop()]);
  });

  it('answers 401 from /mcp with resource_metadata when no credential is given', async () => {
    const r = await postMcp(`${d.url}/mcp`);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${d.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    // A wrong token says so (RFC 6750 invalid_token) and still points to the metadata.
    const wrong = await postMcp(`${d.url}/mcp`, {
      authorization: 'Bearer not-a-token-of-anyone-here-at-all',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${d.url}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('serves the RFC 9728 document with exactly resource and authorization_servers', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const r = await fetch(`${d.url}${path}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(await r.json()).toStrictEqual({ resource: `${d.url}/mcp`, authorization_servers: [d.url] });
    }
  });

  it('serves the RFC 8414 document with exactly the contract fields', async () => {
    const r = await fetch(`${d.url}/.well-known/oauth-authorization-server`);
    expect(r.status).toBe(200);
    expect(await r.json()).toStrictEqual({
      issuer: d.url,
      authorization_endpoint: `${d.url}/authorize`,
      token_endpoint: `${d.url}/token`,
      registration_endpoint: `${d.url}/register`,
      revocation_endpoint: `${d.url}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('keeps the Bearer token and the capability URL working beside OAuth', async () => {
    const bearer = await httpClient(`${d.url}/mcp`, d.mcpToken);
    expect((await bearer.listTools()).tools.length).toBeGreaterThan(0);
    await bearer.close();
    const capability = await httpClient(`${d.url}/mcp/${d.mcpToken}`, undefined);
    expect((await capability.listTools()).tools.length).toBeGreaterThan(0);
    await capability.close();
  });

  it('has none of it while OAuth is off', async () => {
    const r = await postMcp(`${off.url}/mcp`);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).not.toContain('resource_metadata');
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/authorize',
      '/oauth/consent',
    ]) {
      expect((await fetch(`${off.url}${path}`)).status).toBe(404);
    }
  });

  it('is on with public_url, whose origin is <base>', async () => {
    const pub = await startDaemon({ config: { public_url: 'https://broker.example.com' } });
    try {
      const { request } = await import('node:http');
      const get = (path: string, method = 'GET') =>
        new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
          const req = request(
            `${pub.url}${path}`,
            { method, headers: { host: 'broker.example.com' } },
            (res) => {
              let body = '';
              res.on('data', (c: Buffer) => {
                body += c.toString();
              });
              res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
            },
          );
          req.once('error', reject);
          req.end();
        });
      const as = await get('/.well-known/oauth-authorization-server');
      expect(JSON.parse(as.body)).toMatchObject({
        issuer: 'https://broker.example.com',
        token_endpoint: 'https://broker.example.com/token',
      });
      const prm = await get('/.well-known/oauth-protected-resource/mcp');
      expect(JSON.parse(prm.body)).toStrictEqual({
        resource: 'https://broker.example.com/mcp',
        authorization_servers: ['https://broker.example.com'],
      });
      const mcp = await get('/mcp', 'POST');
      expect(mcp.status).toBe(401);
      expect(mcp.headers['www-authenticate']).toBe(
        'Bearer resource_metadata="https://broker.example.com/.well-known/oauth-protected-resource/mcp"',
      );
    } finally {
      await pub.stop();
    }
  });

  it('refuses a bad oauth section with exit 2 naming the field', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'ogf-oauth-cfg-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ oauth: { enabled: 'yes' } }), { mode: 0o600 });
    const run = await runCli(['start', '--data-dir', dir, '--port', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('oauth.enabled: must be true or false');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ oauth: { enable: true } }), { mode: 0o600 });
    const typo = await runCli(['start', '--data-dir', dir, '--port', '0']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('oauth.enable: unknown key');
  });
});
