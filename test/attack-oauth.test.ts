/**
 * Contract 15 attacked over the raw protocol, as a hostile client (or a thief of its traffic) would: code
 * reuse, a wrong PKCE verifier, an unregistered redirect, a missing or foreign resource, a missing state, a
 * CIMD document at a private address or naming another client_id, confidential or too many DCR clients, a
 * token of one connection used as another client, an access token in a capability URL, a name that would
 * borrow a token client's identity, the consent route without the panel key or from another Origin,
 * RFC 7009 revocation — and no token or code in any log or in broker.db (hashes only).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, echoConfig, httpClient, structured } from './helpers/mcp.js';
import {
  authorizeUrl,
  connectByHand,
  decide,
  getAuthorize,
  pkce,
  postForm,
  startVendor,
  type Vendor,
} from './helpers/oauth.js';
import { type PanelLogin, panelLogin } from './helpers/panel.js';

let d: RunningDaemon;
let strict: RunningDaemon;
let vendor: Vendor;
let login: PanelLogin;
/** Every token and code handed out in this suite: none may be found in clear anywhere. */
const secrets: string[] = [];

beforeAll(async () => {
  vendor = await startVendor('Vendor AI');
  [d, strict] = await Promise.all([
    startDaemon({ config: echoConfig({ oauth: { enabled: true, allow_loopback_metadata: true } }) }),
    startDaemon({ config: { oauth: { enabled: true } } }),
  ]);
  login = await panelLogin(d);
});

afterAll(async () => {
  await Promise.all([d?.stop(), strict?.stop()]);
  await vendor?.close();
});

async function connect(name: string) {
  const c = await connectByHand(d, login, vendor, name);
  secrets.push(c.access_token, c.refresh_token, c.code);
  return c;
}

function mcpStatus(token: string, path = '/mcp'): Promise<number> {
  return fetch(`${d.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }),
  }).then((r) => r.status);
}

function authorize(p: Partial<Parameters<typeof authorizeUrl>[1]> = {}, on = d) {
  const { challenge } = pkce();
  return getAuthorize(
    authorizeUrl(on, {
      client_id: vendor.clientId,
      redirect_uri: vendor.redirectUri,
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${on.url}/mcp`,
      ...p,
    }),
  );
}

describe('[c15.tokens] /authorize refuses what it must', () => {
  it('an unregistered redirect: an error page, never a redirect there', async () => {
    const a = await authorize({ redirect_uri: 'https://evil.example/steal' });
    expect(a.status).toBe(400);
    expect(a.location).toBeNull();
    expect(a.text).toContain('redirect_uri: must be exactly one of the redirect URIs the client registered');
    // Same host, another path: not an exact match either.
    expect((await authorize({ redirect_uri: `${vendor.base}/callback2` })).status).toBe(400);
  });

  it('a missing or foreign resource, a missing state, no PKCE: an error back to the client', async () => {
    for (const [params, error] of [
      [{ resource: undefined }, 'invalid_target'],
      [{ resource: 'https://evil.example/mcp' }, 'invalid_target'],
      [{ state: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: undefined }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
    ] as const) {
      const a = await authorize(params as never);
      expect(a.status, JSON.stringify(params)).toBe(302);
      const back = new URL(a.location!);
      expect(back.origin + back.pathname).toBe(vendor.redirectUri);
      expect(back.searchParams.get('error'), JSON.stringify(params)).toBe(error);
    }
  });

  it('a CIMD document at a private address (no allow_loopback_metadata), or naming another client_id', async () => {
    const a = await authorize({}, strict);
    expect(a.status).toBe(400);
    expect(a.text).toContain('not an https URL of a Client ID Metadata Document');
    const https = await getAuthorize(
      authorizeUrl(strict, {
        client_id: `https://127.0.0.1:${new URL(vendor.base).port}/client.json`,
        redirect_uri: vendor.redirectUri,
      }),
    );
    expect(https.status).toBe(400);
    expect(https.text).toContain('which is not a public address');
    vendor.document = { ...vendor.document, client_id: 'https://claude.ai/oauth/client.json' };
    try {
      const other = await getAuthorize(
        authorizeUrl(d, { client_id: `${vendor.base}/client.json?x=1`, redirect_uri: vendor.redirectUri }),
      );
      expect(other.status).toBe(400);
      expect(other.text).toContain('its client_id must equal the URL it was fetched from');
    } finally {
      vendor.document = { ...vendor.document, client_id: vendor.clientId };
    }
  });

  it('Deny sends access_denied with state and iss', async () => {
    const a = await authorize();
    const out = await decide(d, login, a.location!, { decision: 'deny' });
    const back = new URL(out.redirect!);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st');
    expect(back.searchParams.get('iss')).toBe(d.url);
  });
});

describe('[c15.consent] the consent route is the signed-in owner’s alone', () => {
  it('needs the panel key beside the cookie, and the daemon’s own Origin', async () => {
    const a = await authorize();
    const id = /#request=(.+)$/.exec(a.location!)![1]!;
    const cookieOnly = await fetch(`${d.url}/owner/oauth/consent/${id}`, {
      headers: { cookie: login.cookie },
    });
    expect(cookieOnly.status).toBe(401);
    const foreign = await fetch(`${d.url}/owner/oauth/consent/${id}`, {
      method: 'POST',
      headers: {
        cookie: login.cookie,
        'x-ogf-owner-key': login.key,
        origin: 'http://127.0.0.1:1',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ decision: 'allow', client_name: 'sneaky' }),
    });
    expect(foreign.status).toBe(403);
  });

  it('refuses a name that would borrow a token client’s identity or an existing connection’s', async () => {
    await connect('taken');
    for (const [name, why] of [
      ['local', 'MCP token client'],
      ['taken', 'already connected'],
      ['Bad', 'must match'],
    ]) {
      const a = await authorize();
      const out = await decide(d, login, a.location!, { decision: 'allow', client_name: name });
      expect(out.status, name).toBe(400);
      expect(out.error).toContain(why);
    }
  });

  it('is served unframeable (clickjacking)', async () => {
    const r = await fetch(`${d.url}/oauth/consent`);
    expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('[c15.tokens] /token', () => {
  it('refuses a wrong verifier, and the code is spent by the attempt', async () => {
    const { verifier, challenge } = pkce();
    const a = await getAuthorize(
      authorizeUrl(d, {
        client_id: vendor.clientId,
        redirect_uri: vendor.redirectUri,
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: `${d.url}/mcp`,
      }),
    );
    const code = new URL(
      (await decide(d, login, a.location!, { decision: 'allow', client_name: 'pkce-victim' })).redirect!,
    ).searchParams.get('code')!;
    secrets.push(code);
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: vendor.redirectUri,
      client_id: vendor.clientId,
      resource: `${d.url}/mcp`,
    };
    expect(await postForm(`${d.url}/token`, { ...form, code_verifier: pkce().verifier })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await postForm(`${d.url}/token`, { ...form, code_verifier: verifier })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });

  it('refuses another redirect_uri, resource or client_id than /authorize had', async () => {
    for (const [change, error] of [
      [{ redirect_uri: `${vendor.base}/other` }, 'invalid_grant'],
      [{ resource: 'https://evil.example/mcp' }, 'invalid_target'],
      [{ client_id: 'dcr_someone_else' }, 'invalid_grant'],
    ] as const) {
      const { verifier, challenge } = pkce();
      const a = await getAuthorize(
        authorizeUrl(d, {
          client_id: vendor.clientId,
          redirect_uri: vendor.redirectUri,
          state: 's',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          resource: `${d.url}/mcp`,
        }),
      );
      const code = new URL(
        (await decide(d, login, a.location!, { decision: 'allow', client_name: 'mismatch' })).redirect!,
      ).searchParams.get('code')!;
      secrets.push(code);
      const form: Record<string, string> = {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: vendor.redirectUri,
        client_id: vendor.clientId,
        resource: `${d.url}/mcp`,
      };
      const t = await postForm(`${d.url}/token`, Object.assign(form, change));
      expect(t, JSON.stringify(change)).toMatchObject({ status: 400, body: { error } });
    }
  });

  it('a code used twice: refused, and what the first use got is revoked', async () => {
    const c = await connect('reused');
    expect(await mcpStatus(c.access_token)).toBe(200);
    const again = await postForm(`${d.url}/token`, {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: pkce().verifier,
      redirect_uri: vendor.redirectUri,
      client_id: vendor.clientId,
      resource: `${d.url}/mcp`,
    });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await mcpStatus(c.access_token)).toBe(401);
    expect(
      auditRows(d).some(
        (a) => a.action === 'oauth_client_disconnected' && String(a.detail).includes('code_reused'),
      ),
    ).toBe(true);
  });
});

describe('[c15.isolation] access tokens', () => {
  it('act as their own client name only: another connection’s commands are unknown to it', async () => {
    const alpha = await connect('alpha');
    const beta = await connect('beta');
    const a = await httpClient(`${d.url}/mcp`, alpha.access_token);
    const b = await httpClient(`${d.url}/mcp`, beta.access_token);
    const r = await a.callTool({
      name: 'run_command_wait',
      arguments: { command: 'echo', args: { word: 'mine' }, wait_seconds: 0 },
    });
    const id = structured(r as never).pending_id as string;
    const peek = await b.callTool({
      name: 'await_command_result',
      arguments: { pending_id: id, wait_seconds: 0 },
    });
    expect(peek.isError).toBe(true);
    expect(JSON.stringify(peek.content)).toContain('UnknownPendingId');
    await Promise.all([a.close(), b.close()]);
  });

  it('end at once on Disconnect, a 2026-07-28 call waiting in flight included', async () => {
    const c = await connect('modern-wait');
    const client = await httpClient(`${d.url}/mcp`, c.access_token, 'modern');
    const waiting = client.callTool({
      name: 'run_command_wait',
      arguments: { command: 'echo', args: { word: 'wait' }, wait_seconds: 60 },
    });
    const settled = waiting.then(
      () => 'answered',
      () => 'cut off',
    );
    // The call is in flight once the owner sees its command.
    await waitFor(
      () => auditRows(d).some((a) => a.actor_kind === 'client' && a.actor === 'modern-wait'),
      'the call to arrive',
    );
    const r = await fetch(`${d.url}/owner/oauth/disconnect`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: login.cookie,
        'x-ogf-owner-key': login.key,
        origin: d.url,
      },
      body: JSON.stringify({ client_name: 'modern-wait' }),
    });
    expect(r.status).toBe(200);
    expect(await settled).toBe('cut off');
    expect(await mcpStatus(c.access_token)).toBe(401);
    await client.close().catch(() => {});
  });

  it('keep their name: `token mcp --client` refuses a connected client’s name', async () => {
    await connect('owned');
    const run = await runCli(['token', 'mcp', '--client', 'owned', '--data-dir', d.dataDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--client owned: that name belongs to a connected OAuth client');
  });

  it('count only on /mcp in the header, never as a capability URL', async () => {
    const c = await connect('nocap');
    expect(await mcpStatus(c.access_token, `/mcp/${c.access_token}`)).toBe(401);
  });

  it('end by RFC 7009 revocation: an access token alone, a refresh token with its whole connection', async () => {
    const c = await connect('revoked');
    expect(
      await postForm(`${d.url}/revoke`, { token: c.access_token, client_id: vendor.clientId }),
    ).toMatchObject({ status: 200 });
    expect(await mcpStatus(c.access_token)).toBe(401);
    const next = await postForm(`${d.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: c.refresh_token,
      client_id: vendor.clientId,
    });
    expect(next.status).toBe(200);
    secrets.push(next.body.access_token as string, next.body.refresh_token as string);
    expect(await postForm(`${d.url}/revoke`, { token: next.body.refresh_token as string })).toMatchObject({
      status: 200,
    });
    expect(await mcpStatus(next.body.access_token as string)).toBe(401);
    // An unknown token is no error (RFC 7009 §2.2).
    expect((await postForm(`${d.url}/revoke`, { token: 'nothing-we-ever-issued' })).status).toBe(200);
  });
});

describe('[c15.consent] DCR', () => {
  it('registers public clients only, at most 100 a day that the owner allowed (v4)', async () => {
    const reg = (body: Record<string, unknown>) =>
      fetch(`${strict.url}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const confidential = await reg({
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(confidential.status).toBe(400);
    expect(await confidential.json()).toMatchObject({ error: 'invalid_client_metadata' });
    const noRedirect = await reg({ client_name: 'x' });
    expect(await noRedirect.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    const ok = await reg({ redirect_uris: ['https://app.example/cb'], client_name: 'local' });
    expect(ok.status).toBe(201);
    const body = (await ok.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_endpoint_auth_method: 'none', client_name: 'local' });
    expect(body.client_secret).toBeUndefined();
    // Contract 15 (v4): only registrations the owner allowed count (attack-oauth-inherit: a stranger's
    // flood of them does not), so the cap is reached by 100 Allows.
    const owner = await panelLogin(strict);
    for (let i = 0; i < 100; i++) {
      const r = await reg({ redirect_uris: ['https://app.example/cb'] });
      expect(r.status).toBe(201);
      const { client_id } = (await r.json()) as { client_id: string };
      const a = await authorize({ client_id, redirect_uri: 'https://app.example/cb' }, strict);
      const out = await decide(strict, owner, a.location!, { decision: 'allow', client_name: 'app' });
      expect(out.status, out.error).toBe(200);
    }
    const over = await reg({ redirect_uris: ['https://app.example/cb'] });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error_description: string }).error_description).toContain(
      'at most 100 client registrations a day',
    );
  });
});

describe('[c15.tokens] only hashes are kept', () => {
  it('no token or code in the daemon’s logs or in broker.db', async () => {
    const survivor = await connect('survivor');
    expect(secrets.length).toBeGreaterThan(10);
    await d.stop();
    const files = ['broker.db', 'broker.db-wal'].map((f) => {
      try {
        return readFileSync(join(d.dataDir, f)).toString('latin1');
      } catch {
        return '';
      }
    });
    const logs = d.stderr() + d.stdout();
    for (const s of secrets) {
      expect(logs.includes(s), 'a token in the log').toBe(false);
      for (const f of files) expect(f.includes(s), 'a token in broker.db').toBe(false);
    }
    // The hashes are enough: after a restart the connection's tokens still work, as that client.
    d = await startDaemon({ dataDir: d.dataDir });
    expect(await mcpStatus(survivor.access_token)).toBe(200);
    const next = await postForm(`${d.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: survivor.refresh_token,
      client_id: vendor.clientId,
    });
    expect(next.status).toBe(200);
  });
});
