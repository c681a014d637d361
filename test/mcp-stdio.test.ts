/**
 * `ogf-broker mcp-stdio` (contract 1.1, 3) driven by the SDK's real Client over a real child's stdin/stdout:
 * the same tools as HTTP, acting as client `local`, progress forwarded, a command approved by a real owner;
 * starting the daemon in the background when none runs; and strict flags (exit 2).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import {
  call,
  commandCount,
  echoConfig,
  GENERATIONS,
  httpClient,
  type StdioChild,
  stdioClient,
  structured,
  TestOwner,
  textOf,
} from './helpers/mcp.js';

describe.each(GENERATIONS)('mcp-stdio against a running daemon (%s generation)', (generation) => {
  let d: RunningDaemon;
  let child: StdioChild;
  let owner: TestOwner;

  beforeAll(async () => {
    d = await startDaemon({ config: echoConfig() });
    child = await stdioClient(d.dataDir, {}, generation);
    owner = await TestOwner.connect(d);
  });
  afterAll(async () => {
    owner?.close();
    await child?.client.close();
    await d?.stop();
  });

  it('lists exactly the tools the HTTP endpoint lists', async () => {
    const viaStdio = await child.client.listTools();
    const http = await httpClient(d.info.mcp_url, d.mcpToken, generation);
    try {
      const viaHttp = await http.listTools();
      expect(viaStdio.tools).toEqual(viaHttp.tools);
      expect(viaStdio.tools.map((t) => t.name).sort()).toEqual(
        ['await_command_result', 'cancel_command', 'list_commands', 'ogf_cue', 'run_command_wait'].sort(),
      );
    } finally {
      await http.close();
    }
  });

  it('passes refusals through unchanged', async () => {
    const r = await call(child.client, 'ogf_cue', {
      session_id: 'nope',
      action: 'wave',
      emotion: 'happy',
      intensity: 0.5,
      gaze: 'user',
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^InvalidArguments: session_id must be /);
  });

  it('[c3.2.bad-input] [attack] a __proto__ key in the arguments is refused as over HTTP, not dropped on the way', async () => {
    // The SDK's schema of the stdio side drops an own `__proto__` key silently, before the relay sees it:
    // the call would have been queued as if the key were not there (contract 3.3: refused, named).
    const before = commandCount(d);
    for (const json of [
      '{"__proto__":{"x":1},"command":"echo","args":{"word":"proto"},"wait_seconds":0}',
      '{"command":"echo","args":{"word":"proto","__proto__":{"x":1}},"wait_seconds":0}',
    ]) {
      const r = await call(child.client, 'run_command_wait', JSON.parse(json) as Record<string, unknown>);
      expect(r.isError, textOf(r)).toBe(true);
      expect(textOf(r)).toMatch(/^InvalidArguments: (args\.)?__proto__ /);
    }
    expect(commandCount(d)).toBe(before);
  });

  it('runs a command as client local: PENDING, progress while waiting, then SUCCEEDED on approval', async () => {
    const queued = structured(
      await call(child.client, 'run_command_wait', {
        command: 'echo',
        args: { word: 'stdio' },
        wait_seconds: 0,
      }),
    );
    expect(queued).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    const id = String(queued.pending_id);
    await waitFor(() => owner.views.get(id), 'the owner to see the command');
    expect(owner.views.get(id)?.client).toBe('local');

    const ticks: number[] = [];
    const waited = await call(
      child.client,
      'await_command_result',
      { pending_id: id, wait_seconds: 7 },
      { onprogress: (p) => ticks.push(p.progress), timeout: 60_000 },
    );
    expect(structured(waited).status).toBe('PENDING');
    expect(ticks.length).toBeGreaterThanOrEqual(1);

    const waiting = call(
      child.client,
      'await_command_result',
      { pending_id: id, wait_seconds: 60 },
      { timeout: 90_000 },
    );
    expect((await owner.approve(id)).ok).toBe(true);
    const r = await waiting;
    expect(structured(r)).toMatchObject({ status: 'SUCCEEDED', stdout: 'said stdio', exit_code: 0 });
    // The relay logs to stderr only and never the token.
    expect(child.stderr()).not.toContain(d.mcpToken);
  });
});

describe('mcp-stdio across a daemon restart', () => {
  it('reconnects to the new daemon of its data dir on the next call', async () => {
    let d = await startDaemon({ config: echoConfig() });
    const child = await stdioClient(d.dataDir);
    try {
      const first = structured(
        await call(child.client, 'run_command_wait', {
          command: 'echo',
          args: { word: 'before' },
          wait_seconds: 0,
        }),
      );
      expect(first.status).toBe('PENDING');
      await d.stop();
      d = await startDaemon({ dataDir: d.dataDir });
      // The old session is gone with the old daemon (and its port); the relay finds the new one.
      const again = await call(child.client, 'await_command_result', {
        pending_id: first.pending_id,
        wait_seconds: 0,
      });
      expect(again.isError, textOf(again)).toBeFalsy();
      expect(structured(again)).toMatchObject({ pending_id: first.pending_id, status: 'PENDING' });
      expect(child.stderr()).toContain('mcp_stdio_reconnect');
    } finally {
      await child.client.close();
      await d.stop();
    }
  });
});

describe('mcp-stdio without a running daemon', () => {
  const dataDir = join(makeDataDir('ogf-stdio-'), 'state');
  let started: number | undefined;

  afterAll(async () => {
    if (started !== undefined) {
      try {
        process.kill(started, 'SIGTERM');
        await waitFor(() => !existsSync(join(dataDir, 'daemon.json')), 'the daemon to stop', 15_000);
      } catch {
        // Already gone.
      }
    }
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  });

  it('starts the daemon in the background and serves the tools through it', async () => {
    // Port 0 so the started daemon never depends on a fixed port (the variable reaches the daemon).
    const child = await stdioClient(dataDir, { OGF_BROKER_PORT: '0' });
    try {
      const r = await call(child.client, 'list_commands', {});
      expect(structured(r)).toEqual({ commands: [], ogf_bridge_configured: false });
      const info = JSON.parse(readFileSync(join(dataDir, 'daemon.json'), 'utf8')) as {
        pid: number;
        url: string;
      };
      started = info.pid;
      expect(() => process.kill(info.pid, 0)).not.toThrow();
    } finally {
      await child.client.close();
    }
    // The daemon outlives the stdio session that started it.
    await new Promise((r) => setTimeout(r, 300));
    expect(() => process.kill(started!, 0)).not.toThrow();
  });
});

describe('mcp-stdio flags', () => {
  it('refuses an unknown flag with one line on stderr and exit 2', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp-stdio', '--port', '1'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain('--port');
    expect(out).toBe('');
  });
});

describe('[c3.2.bad-input] mcp-stdio: a line as the client wrote it', () => {
  let d: RunningDaemon;
  beforeAll(async () => {
    d = await startDaemon({ config: echoConfig() });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('[attack] a line whose _meta holds a __proto__ key, renamed in its text, still reaches the tools', async () => {
    // Raw lines, as a client other than the SDK's may write them. The key makes mcp-stdio rename it in the
    // line's text (stdio-lines.ts); the call must go on as written, judged on its arguments.
    const child = spawn(process.execPath, [CLI, 'mcp-stdio', '--data-dir', d.dataDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const answer = async (id: number) => {
      await waitFor(
        () => out.split('\n').some((l) => l.includes(`"id":${id}`)),
        `the answer to request ${id}`,
      );
      return JSON.parse(out.split('\n').find((l) => l.includes(`"id":${id}`))!) as {
        result: { content: Array<{ text: string }>; isError?: boolean };
      };
    };
    const callLine = (id: number, word: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"run_command_wait","arguments":{"command":"echo","args":{"word":${word}},"wait_seconds":0},"_meta":{"__proto__":{}}}}\n`;
    try {
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
      );
      await answer(1);
      child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      const before = commandCount(d);
      child.stdin.write(callLine(2, '"proto"'));
      const held = (await answer(2)).result;
      expect(held.isError, held.content[0]?.text).toBeFalsy();
      expect(held.content[0]!.text).toMatch(/PENDING/);
      expect(commandCount(d)).toBe(before + 1);
      // `1e400` reaches the daemon as `null` whatever the stream does: the SDK parses the line (Infinity)
      // and the relay's HTTP request is JSON (docs/reliability.md). Refused either way; nothing queued.
      child.stdin.write(callLine(3, '1e400'));
      const refused = (await answer(3)).result;
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toMatch(/^InvalidArguments: args\.word /);
      expect(commandCount(d)).toBe(before + 1);
    } finally {
      child.kill();
    }
  });
});
