/**
 * The Streamable HTTP endpoint's gate (contracts.md 3, 5): 401 without a valid token (bearer or capability
 * URL), 403 for a bad Host or a foreign Origin, 413 for an oversized body, sessions bound to their client,
 * tokens kept out of the logs; and the feature-off `ogf_cue` (3.3): DENIED at once, audited, never queued.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon } from './helpers/daemon.js';
import {
  auditRows,
  call,
  commandCount,
  echoConfig,
  GENERATIONS,
  httpClient,
  type McpClient,
  makeClientToken,
  structured,
  TestOwner,
  textOf,
} from './helpers/mcp.js';

const UUID = '0f1e2d3c-4b5a-4697-8877-665544332211';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request (node:http, so Host and Origin can be anything). */
function raw(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...opts.headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
          // An SSE answer stays open; the first event is all we need.
          if (res.headers['content-type']?.includes('text/event-stream') && body.includes('\n\n'))
            res.destroy();
        });
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        res.on('end', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

let d: RunningDaemon;

beforeAll(async () => {
  // No ogf_bridge: the OGF feature is off in this daemon.
  d = await startDaemon({ config: echoConfig() });
});

afterAll(async () => {
  await d?.stop();
});

describe('HTTP auth, Host, Origin and body size', () => {
  const body = JSON.stringify(INIT);

  it('[c3.auth] answers 401 (JSON, no detail of why) without a token, with a wrong one, or a malformed header', async () => {
    for (const headers of <Array<Record<string, string>>>[
      {},
      { authorization: 'Bearer wrong-token-wrong-token-wrong-token-00' },
      { authorization: `Basic ${d.mcpToken}` },
      { authorization: `Bearer ${d.mcpToken}x` },
    ]) {
      const r = await raw(d.url, '/mcp', { headers, body });
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.headers['content-type']).toContain('application/json');
      expect(r.body).not.toContain(d.mcpToken);
      expect(JSON.parse(r.body)).toMatchObject({
        error: { message: expect.stringMatching(/^Unauthorized/) },
      });
    }
  });

  it.each(GENERATIONS)(
    '[c3.auth] [c1.2.tokens] answers 401 on a capability URL with a wrong token, and serves MCP on the right one (%s)',
    async (generation) => {
      expect((await raw(d.url, '/mcp/not-the-token-not-the-token-not-the-tok', { body })).status).toBe(401);
      expect((await raw(d.url, `/mcp/${d.mcpToken}x`, { body })).status).toBe(401);
      // The SDK client on the capability URL, no header at all (how ChatGPT connects).
      const viaUrl = await httpClient(`${d.url}/mcp/${d.mcpToken}`, undefined, generation);
      try {
        const { tools } = await viaUrl.listTools();
        expect(tools).toHaveLength(5);
        const r = await call(viaUrl, 'run_command_wait', {
          command: 'echo',
          args: { word: `cap${generation}` },
          wait_seconds: 0,
        });
        expect(structured(r).status).toBe('PENDING');
      } finally {
        await viaUrl.close();
      }
      // The token never reaches a log line, although it was in a request path.
      expect(d.stderr()).not.toContain(d.mcpToken);
      expect(d.stderr()).toContain('/mcp/<token>');
    },
  );

  it('[c5.host] answers 403 for a foreign Host (DNS rebinding) even with a valid token', async () => {
    const r = await raw(d.url, '/mcp', {
      headers: { authorization: `Bearer ${d.mcpToken}`, host: 'evil.example:80' },
      body,
    });
    expect(r.status).toBe(403);
  });

  it("[c5.origin] answers 403 for a foreign browser Origin, and accepts the daemon's own", async () => {
    const auth = { authorization: `Bearer ${d.mcpToken}` };
    const bad = await raw(d.url, '/mcp', { headers: { ...auth, origin: 'https://evil.example' }, body });
    expect(bad.status).toBe(403);
    const good = await raw(d.url, '/mcp', { headers: { ...auth, origin: d.url }, body });
    expect(good.status).toBe(200);
    expect(good.headers['mcp-session-id']).toBeTruthy();
    // No Origin at all (non-browser clients) is fine too.
    expect((await raw(d.url, '/mcp', { headers: auth, body })).status).toBe(200);
  });

  it('[c3.2.bad-input] answers 413 for a body over 1 MiB, and 400 for a body that is not JSON', async () => {
    const auth = { authorization: `Bearer ${d.mcpToken}` };
    const big = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: 'x'.repeat(1024 * 1024) } });
    expect((await raw(d.url, '/mcp', { headers: auth, body: big })).status).toBe(413);
    expect((await raw(d.url, '/mcp', { headers: auth, body: '{not json' })).status).toBe(400);
    // The positive control just under the limit is an ordinary initialize.
    const fits = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: 'x'.repeat(1000 * 1000) } });
    expect((await raw(d.url, '/mcp', { headers: auth, body: fits })).status).toBe(200);
  });

  it("binds a session to its client: another client's token on it gets 404, like an unknown session", async () => {
    const init = await raw(d.url, '/mcp', { headers: { authorization: `Bearer ${d.mcpToken}` }, body });
    const sid = String(init.headers['mcp-session-id']);
    expect(sid).toMatch(/.{8,}/);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const common = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const mine = await raw(d.url, '/mcp', {
      headers: { ...common, authorization: `Bearer ${d.mcpToken}` },
      body: list,
    });
    expect(mine.status).toBe(200);
    expect(mine.body).toContain('run_command_wait');
    const otherToken = await makeClientToken(d, 'intruder');
    const theirs = await raw(d.url, '/mcp', {
      headers: { ...common, authorization: `Bearer ${otherToken}` },
      body: list,
    });
    expect(theirs.status).toBe(404);
    const unknown = await raw(d.url, '/mcp', {
      headers: { ...common, 'mcp-session-id': 'no-such-session', authorization: `Bearer ${otherToken}` },
      body: list,
    });
    expect(unknown.status).toBe(404);
    expect(theirs.body).toBe(unknown.body);
    // A request that is not initialize, without a session, is a 400.
    expect(
      (await raw(d.url, '/mcp', { headers: { authorization: `Bearer ${d.mcpToken}` }, body: list })).status,
    ).toBe(400);
  });
});

describe.each(GENERATIONS)('ogf_cue with the OGF feature off (contract 3.3), %s generation', (generation) => {
  let mcp: McpClient;
  let owner: TestOwner;

  beforeAll(async () => {
    mcp = await httpClient(d.info.mcp_url, d.mcpToken, generation);
    owner = await TestOwner.connect(d);
  });
  afterAll(async () => {
    owner?.close();
    await mcp?.close();
  });

  it('answers DENIED/OgfBridgeNotConfigured at once, with no pending_id, audited, and never queued', async () => {
    const before = commandCount(d);
    const auditBefore = auditRows(d).length;
    const r = await call(
      mcp,
      'ogf_cue',
      { session_id: UUID, action: 'wave', emotion: 'happy', intensity: 0.7, gaze: 'user', wait_seconds: 90 },
      // Far shorter than wait_seconds: a product that waited would fail here.
      { timeout: 20_000 },
    );
    expect(r.isError).toBeFalsy();
    expect(structured(r)).toEqual({
      status: 'DENIED',
      reason: 'OgfBridgeNotConfigured',
      detail: expect.any(String),
    });
    expect(textOf(r)).toMatch(/^DENY OgfBridgeNotConfigured/);
    expect(textOf(r)).not.toContain(UUID);
    expect(commandCount(d)).toBe(before);

    const audit = auditRows(d).slice(auditBefore);
    expect(audit.some((row) => String(row.detail).includes('OgfBridgeNotConfigured'))).toBe(true);
    expect(JSON.stringify(audit)).not.toContain(UUID);
    expect(d.stderr()).not.toContain(UUID);

    // Nothing reached the owners: no snapshot entry, no upsert.
    await new Promise((res) => setTimeout(res, 200));
    expect([...owner.views.values()].filter((v) => v.command === 'ogf.cue' || v.tool === 'ogf_cue')).toEqual(
      [],
    );
    const list = await call(mcp, 'list_commands', {});
    expect(structured(list).ogf_bridge_configured).toBe(false);
  });

  it('declares ogf_cue taskSupport "forbidden" when the feature is off (contract 10), run_command_wait "optional"', async () => {
    const { tools } = await mcp.listTools();
    const support = Object.fromEntries(
      tools.map((t) => [t.name, (t as { execution?: { taskSupport?: string } }).execution?.taskSupport]),
    );
    // 2026-07-28 has no execution member on a tool (the SDK strips it); the 2025 form carries it.
    if (generation === 'legacy')
      expect(support).toMatchObject({ ogf_cue: 'forbidden', run_command_wait: 'optional' });
    else expect(support).toMatchObject({ ogf_cue: undefined, run_command_wait: undefined });
  });

  it('still validates first: a bad cue is InvalidArguments, not DENIED', async () => {
    const r = await call(mcp, 'ogf_cue', {
      session_id: UUID,
      action: 'wave',
      emotion: 'happy',
      intensity: 2,
      gaze: 'user',
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^InvalidArguments: intensity must be /);
  });
});
