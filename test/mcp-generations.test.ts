/**
 * Both MCP protocol generations on one URL and one token (contracts.md 10, 3.1): the 2026-07-28 generation
 * (server/discover, the per-request envelope, no session) and the 2025 one (initialize, Mcp-Session-Id),
 * seen from the raw wire and from both SDKs; an unknown tool is JSON-RPC -32602 naming it in both.
 */

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, exited, makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { echoConfig, GENERATIONS, httpClient, MODERN_VERSION, negotiatedVersion } from './helpers/mcp.js';
import { LegacyWire, ModernWire, post, TASKS_EXTENSION } from './helpers/wire.js';

let d: RunningDaemon;
let auth: Record<string, string>;

beforeAll(async () => {
  d = await startDaemon({
    config: echoConfig({
      ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge' },
      mcp_allowed_origins: ['https://chatgpt.com'],
    }),
  });
  auth = { authorization: `Bearer ${d.mcpToken}` };
});
afterAll(async () => {
  await d?.stop();
});

describe('[c10.generations] one URL, two generations', () => {
  it('answers server/discover with 2026-07-28 and the Tasks extension, and opens no session', async () => {
    const r = await new ModernWire(d.info.mcp_url, auth).request('server/discover');
    expect(r.status).toBe(200);
    expect(r.headers['mcp-session-id']).toBeUndefined();
    const result = r.response?.result as Record<string, unknown>;
    expect(result.supportedVersions).toEqual([MODERN_VERSION]);
    const caps = result.capabilities as Record<string, unknown>;
    expect(caps.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(caps.tools).toMatchObject({ listChanged: true });
    // The 2025 task capability does not exist in 2026-07-28.
    expect(caps.tasks).toBeUndefined();
  });

  it('serves 2026-07-28 requests per request: tools/list and a call without any Mcp-Session-Id', async () => {
    const wire = new ModernWire(d.info.mcp_url, auth);
    const list = await wire.request('tools/list');
    expect(list.status).toBe(200);
    expect(list.headers['mcp-session-id']).toBeUndefined();
    const tools = (list.response?.result?.tools ?? []) as Array<Record<string, unknown>>;
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['await_command_result', 'cancel_command', 'list_commands', 'ogf_cue', 'run_command_wait'].sort(),
    );
    const call = await wire.request('tools/call', {
      name: 'run_command_wait',
      arguments: { command: 'echo', args: { word: 'perrequest' }, wait_seconds: 0 },
    });
    expect(call.response?.result?.structuredContent).toMatchObject({ status: 'PENDING' });
  });

  it('keeps 2025 sessions: initialize returns an Mcp-Session-Id and the tasks capability', async () => {
    const wire = await LegacyWire.open(d.info.mcp_url, auth);
    expect(wire.initialize.headers['mcp-session-id']).toMatch(/.{8,}/);
    const result = wire.initialize.response?.result as Record<string, unknown>;
    expect(result.protocolVersion).toBe('2025-11-25');
    expect(result.capabilities).toMatchObject({
      tools: { listChanged: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    // contract 10: gated tools declare taskSupport "optional", the others "forbidden" (2025 form only:
    // 2026-07-28 has no execution member on a tool, and the SDK strips it there).
    const tools = (await wire.request('tools/list')).response?.result?.tools as Array<
      Record<string, unknown>
    >;
    const support = Object.fromEntries(
      tools.map((t) => [t.name, (t.execution as { taskSupport?: string })?.taskSupport]),
    );
    expect(support).toEqual({
      ogf_cue: 'optional',
      run_command_wait: 'optional',
      await_command_result: 'forbidden',
      cancel_command: 'forbidden',
      list_commands: 'forbidden',
    });
  });

  it('refuses a 2026-07-28 request without a token (401) and from a foreign Origin (403), like a 2025 one', async () => {
    const noToken = await new ModernWire(d.info.mcp_url, {}).request('server/discover');
    expect(noToken.status).toBe(401);
    const foreign = await new ModernWire(d.info.mcp_url, { ...auth, origin: 'https://evil.example' }).request(
      'server/discover',
    );
    expect(foreign.status).toBe(403);
    const capability = await new ModernWire(`${d.url}/mcp/${d.mcpToken}`, {}).request('server/discover');
    expect(capability.status).toBe(200);
  });

  it.each(GENERATIONS)('negotiates the generation the SDK client asked for (%s)', async (generation) => {
    const client = await httpClient(d.info.mcp_url, d.mcpToken, generation);
    try {
      const version = negotiatedVersion(client);
      if (generation === 'modern') expect(version).toBe(MODERN_VERSION);
      else expect(version).toMatch(/^2025-/);
      expect((await client.listTools()).tools).toHaveLength(5);
    } finally {
      await client.close();
    }
  });
});

describe('[c3.1.unknown-tool] a tools/call naming no listed tool', () => {
  const call = { name: 'rm_rf', arguments: {} };

  it('is JSON-RPC -32602 naming the tool, over 2026-07-28', async () => {
    const r = await new ModernWire(d.info.mcp_url, auth).request('tools/call', call);
    expect(r.response?.error?.code).toBe(-32602);
    expect(r.response?.error?.message).toContain('"rm_rf"');
    expect(r.response?.result).toBeUndefined();
  });

  it('is JSON-RPC -32602 naming the tool, over a 2025 session', async () => {
    const wire = await LegacyWire.open(d.info.mcp_url, auth);
    const r = await wire.request('tools/call', call);
    expect(r.response?.error?.code).toBe(-32602);
    expect(r.response?.error?.message).toContain('"rm_rf"');
    // The positive control: a listed tool on the same session is answered as a result.
    const ok = await wire.request('tools/call', { name: 'list_commands', arguments: {} });
    expect(ok.response?.result?.structuredContent).toMatchObject({ ogf_bridge_configured: true });
  });

  it('is an error the SDK clients raise (not an isError result), in both generations', async () => {
    for (const generation of GENERATIONS) {
      const client = await httpClient(d.info.mcp_url, d.mcpToken, generation);
      try {
        const args = { name: 'rm_rf', arguments: {} };
        const p =
          'getProtocolEra' in client
            ? client.callTool(args)
            : client.callTool(args, undefined, { timeout: 10_000 });
        await expect(p, generation).rejects.toMatchObject({
          code: -32602,
          message: expect.stringContaining('rm_rf'),
        });
      } finally {
        await client.close();
      }
    }
  });
});

describe('[c1.3.mcp-origins] mcp_allowed_origins (contract 1.3)', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'o', version: '1' } },
  };

  it('accepts a listed Origin (ChatGPT) in both generations, and refuses look-alikes with 403', async () => {
    for (const origin of ['https://chatgpt.com', 'https://CHATGPT.com']) {
      expect((await post(d.info.mcp_url, initialize, { ...auth, origin })).status, origin).toBe(200);
      expect(
        (await new ModernWire(d.info.mcp_url, { ...auth, origin }).request('server/discover')).status,
      ).toBe(200);
    }
    for (const origin of [
      'http://chatgpt.com',
      'https://chatgpt.com.evil.example',
      'https://evil.example',
      'null',
    ]) {
      expect((await post(d.info.mcp_url, initialize, { ...auth, origin })).status, origin).toBe(403);
      expect(
        (await new ModernWire(d.info.mcp_url, { ...auth, origin }).request('server/discover')).status,
      ).toBe(403);
    }
  });

  it('still judges a listed Origin by its token first (401 without one)', async () => {
    expect((await post(d.info.mcp_url, initialize, { origin: 'https://chatgpt.com' })).status).toBe(401);
  });

  it('refuses a config whose entry is not an https origin (exit 2 naming the field)', async () => {
    const dir = makeDataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ mcp_allowed_origins: ['http://chatgpt.com'] }), {
      mode: 0o600,
    });
    const child = spawn(process.execPath, [CLI, 'start', '--data-dir', dir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    expect(await exited(child)).toBe(2);
    expect(err).toContain('mcp_allowed_origins');
    expect(err).toContain('https origin');
  });
});
