/**
 * Row 14, an MCP call with an OAuth access token vs with the Bearer MCP token (contract 15; issue 25: p50
 * ≤ 1.05×). The same daemon (`oauth.enabled`), the same SDK client code, the same call —
 * `await_command_result` on the caller's own already-final command — once as client `local` (Bearer MCP
 * token) and once as an OAuth connection (its access token, obtained the way a remote client gets one:
 * its Client ID Metadata Document served over loopback, /authorize, the owner's Allow through the consent
 * page's own route, /token with PKCE). The two alternate call by call, each going first half the time.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, closeMcp, connectMcp } from '../lib/clients.js';
import { benchConfig, type Daemon, makeDataDir, removeDir, startDaemon } from '../lib/procs.js';
import { median, quantile, type Row, ratioOf } from '../lib/stats.js';

/** An access token for a new connection named `name`, as a remote client obtains it. */
async function accessToken(d: Daemon, name: string): Promise<{ token: string; close: () => void }> {
  const doc: Record<string, unknown> = {};
  const vendor = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  const clientId = `${base}/client.json`;
  const redirect = `${base}/callback`;
  Object.assign(doc, { client_id: clientId, client_name: 'bench', redirect_uris: [redirect] });
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirect,
    state: 'bench',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: `${d.url}/mcp`,
  });
  const a = await fetch(`${d.url}/authorize?${q}`, { redirect: 'manual' });
  const id = /#request=(.+)$/.exec(a.headers.get('location') ?? '')?.[1];
  if (id === undefined) throw new Error(`authorize answered ${a.status}`);
  const login = await fetch(`${d.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: d.ownerToken }),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const { key } = (await login.json()) as { key: string };
  const allow = await fetch(`${d.url}/owner/oauth/consent/${id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-ogf-owner-key': key, origin: d.url },
    body: JSON.stringify({ decision: 'allow', client_name: name }),
  });
  const { redirect: back } = (await allow.json()) as { redirect: string };
  const code = new URL(back).searchParams.get('code') ?? '';
  const t = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: clientId,
      resource: `${d.url}/mcp`,
    }).toString(),
  });
  const body = (await t.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`token answered ${t.status}`);
  return { token: body.access_token, close: () => vendor.close() };
}

async function finalCommand(client: Client): Promise<string> {
  const queued = await callTool(client, 'run_command_wait', {
    command: 'noop',
    args: { tag: 'oauth' },
    wait_seconds: 0,
  });
  const id = String(queued.pending_id);
  await callTool(client, 'cancel_command', { pending_id: id });
  return id;
}

async function timeCall(client: Client, id: string): Promise<number> {
  const t0 = performance.now();
  await callTool(client, 'await_command_result', { pending_id: id, wait_seconds: 0 });
  return performance.now() - t0;
}

export async function oauthOverhead(quick: boolean): Promise<Row[]> {
  const dir = makeDataDir();
  const d = await startDaemon(dir, benchConfig({ oauth: { enabled: true, allow_loopback_metadata: true } }));
  const access = await accessToken(d, 'benchai');
  const bearer = await connectMcp(d.mcpUrl, d.mcpToken);
  const oauth = await connectMcp(d.mcpUrl, access.token);
  try {
    const bearerId = await finalCommand(bearer);
    const oauthId = await finalCommand(oauth);
    const n = quick ? 100 : 600;
    const a: number[] = [];
    const b: number[] = [];
    // Call by call, the pair's order swapped every time: measured in blocks, whichever went first in a
    // block came out up to 1.3× slower on a busy machine, in either role.
    for (let i = 0; i < n + 50; i++) {
      const first = i % 2 === 0;
      const x = first ? await timeCall(oauth, oauthId) : 0;
      const y = await timeCall(bearer, bearerId);
      const z = first ? x : await timeCall(oauth, oauthId);
      if (i < 50) continue; // warm-up (JIT, connections)
      a.push(z);
      b.push(y);
    }
    const value = median(a);
    const baseline = median(b);
    const ratio = ratioOf(value, baseline);
    return [
      {
        id: '14 oauth token',
        figure: 'await_command_result (final) with an OAuth access token, median',
        value,
        unit: 'ms',
        baseline,
        baselineLabel: 'same call, Bearer MCP token',
        ratio,
        goal: '≤ 1.05×',
        result: ratio !== null && ratio <= 1.05 ? 'pass' : 'miss',
        detail: { calls_each: a.length, oauth_p90_ms: quantile(a, 0.9), bearer_p90_ms: quantile(b, 0.9) },
      },
    ];
  } finally {
    await closeMcp([bearer, oauth]);
    access.close();
    await d.stop();
    removeDir(dir);
  }
}
