/**
 * Contract 7: gated upstream tools, end to end through the real config of a real daemon — the MCP SDK
 * client over real HTTP, a real owner WebSocket, and real upstream servers from node_modules
 * (@modelcontextprotocol/server-filesystem, server-everything) plus our own misbehaving test server for
 * every row of the outcome table.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import {
  call,
  commandCount,
  httpClient,
  type McpClient,
  structured,
  TestOwner,
  textOf,
} from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { EVERYTHING, FILESYSTEM, TEST_UPSTREAM } from './helpers/upstreams.js';

/** What our test server saw, one entry per line it logged. */
function seen(
  log: string,
): Array<{ pid: number; call?: string; arguments?: unknown; cancelled?: string; started?: boolean }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

function storedCommand(d: RunningDaemon, id: string): { phase: Record<string, unknown> } {
  const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return JSON.parse(
      (db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string }).body,
    );
  } finally {
    db.close();
  }
}

const files = mkdtempSync(join(tmpdir(), 'ogf-up-files-'));
const logDir = mkdtempSync(join(tmpdir(), 'ogf-up-log-'));
const oursLog = join(logDir, 'ours.jsonl');
const onceLog = join(logDir, 'once.jsonl');
let d: RunningDaemon;
let mcp: McpClient;
let owner: TestOwner;
let socket: OwnerSocket;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      upstreams: {
        fs: {
          argv: [process.execPath, FILESYSTEM, files],
          tools: ['write_file', 'read_text_file'],
          trust_read_only_hint: true,
          wait_seconds: 30,
        },
        everything: {
          argv: [process.execPath, EVERYTHING, 'stdio'],
          timeout_s: 1,
          tools: ['get-structured-content', 'trigger-long-running-operation'],
        },
        ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok', oursLog], timeout_s: 1, wait_seconds: 30 },
        once: { argv: [process.execPath, TEST_UPSTREAM, 'once', onceLog], wait_seconds: 0 },
      },
    },
  });
  mcp = await httpClient(`${d.url}/mcp`, d.mcpToken);
  owner = await TestOwner.connect(d);
  socket = await OwnerSocket.open(d);
  await waitFor(
    async () => {
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      return ['fs__write_file', 'everything__get-structured-content', 'ours__echo', 'once__echo'].every((n) =>
        names.includes(n),
      );
    },
    'every upstream tool listed',
    45_000,
  );
});

afterAll(async () => {
  owner?.close();
  await socket?.close();
  await mcp?.close();
  await d?.stop();
});

/** Starts a call, waits for the owner to see it, decides, and returns the call's answer. */
async function decided(
  name: string,
  args: Record<string, unknown>,
  decide: 'approve' | 'deny',
): Promise<{ answer: CallToolResult; id: string }> {
  const before = new Set(owner.views.keys());
  const answer = call(mcp, name, args);
  const view = await waitFor(
    () => [...owner.views.values()].find((v) => !before.has(v.id) && v.command === name),
    `the owner to see ${name}`,
  );
  if (decide === 'approve') expect((await owner.approve(view.id)).ok).toBe(true);
  else expect((await socket.request({ type: 'deny', id: view.id, version: view.version })).ok).toBe(true);
  return { answer: await answer, id: view.id };
}

describe('exposed upstream tools', () => {
  it('[c7.exposed] tools/list lists <upstream>__<tool> with the upstream’s schema, title and annotations, no outputSchema, taskSupport optional', async () => {
    const { tools } = await mcp.listTools();
    const w = tools.find((t) => t.name === 'fs__write_file')!;
    expect(w.inputSchema.properties).toHaveProperty('path');
    expect(w.inputSchema.properties).toHaveProperty('content');
    expect(w.description).toMatch(/^Each call needs the owner's approval and may answer PENDING/);
    expect(w.outputSchema).toBeUndefined();
    expect(w.execution?.taskSupport).toBe('optional');
    const s = tools.find((t) => t.name === 'everything__get-structured-content')!;
    expect(s.title).toBe('Get Structured Content Tool');
    expect(s.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(s.outputSchema).toBeUndefined();
    // `tools` in the config exposes only those.
    expect(tools.some((t) => t.name === 'fs__list_directory')).toBe(false);
  });

  it('[c7.validation] a call that does not match the upstream’s inputSchema is InvalidArguments naming the field, nothing queued', async () => {
    const before = commandCount(d);
    const r = await call(mcp, 'fs__write_file', { path: 7, content: 'x' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^InvalidArguments: path must be string/);
    const missing = await call(mcp, 'fs__write_file', { path: join(files, 'a.txt') });
    expect(textOf(missing)).toMatch(/^InvalidArguments: .*content/);
    expect(commandCount(d)).toBe(before);
  });
});

describe('server-filesystem behind the gate', () => {
  it('[c7.exact-args] write_file approved: the file holds exactly the approved content, and the answer is the upstream’s own result with _meta', async () => {
    const path = join(files, 'approved.txt');
    const content = 'exactly this\n  with "quotes", unicode ✓ and a trailing space ';
    const { answer, id } = await decided('fs__write_file', { path, content }, 'approve');
    expect(readFileSync(path, 'utf8')).toBe(content);
    expect(answer.isError).toBeFalsy();
    expect(answer._meta?.['ogf-broker/command']).toEqual({
      pending_id: id,
      status: 'SUCCEEDED',
      command: 'fs__write_file',
    });
    expect(textOf(answer)).toMatch(/Successfully wrote/);
    const view = await socket.view(id, (v) => v.state === 'succeeded', 'succeeded');
    expect(view.tool).toBe('upstream');
    expect(view.display).toEqual(['fs', 'write_file']);
    expect(view.args).toEqual({ path, content });
  });

  it('[c2.rule-1] write_file denied: the file never appears', async () => {
    const path = join(files, 'denied.txt');
    const { answer } = await decided('fs__write_file', { path, content: 'never' }, 'deny');
    expect(structured(answer)).toMatchObject({ status: 'DENIED', reason: 'OwnerDenied' });
    expect(existsSync(path)).toBe(false);
  });

  it('[c7.read-only-policy] read_text_file with trust_read_only_hint runs at once, decided by policy:read_only, and is recorded', async () => {
    const before = commandCount(d);
    const r = await call(mcp, 'fs__read_text_file', { path: join(files, 'approved.txt') });
    expect(textOf(r)).toContain('exactly this');
    const meta = r._meta?.['ogf-broker/command'] as { pending_id: string; status: string };
    expect(meta.status).toBe('SUCCEEDED');
    expect(commandCount(d)).toBe(before + 1);
    const stored = storedCommand(d, meta.pending_id);
    expect(stored.phase).toMatchObject({ state: 'succeeded', decided_by: 'policy:read_only' });
    await socket.view(meta.pending_id, (v) => v.state === 'succeeded', 'the owner sees it');
  });
});

describe('server-everything behind the gate', () => {
  it('[c7.answer] structured content passes through unchanged; await_command_result gives 3.2 with upstream_result and the upstream’s blocks after the summary', async () => {
    const { answer, id } = await decided(
      'everything__get-structured-content',
      { location: 'Chicago' },
      'approve',
    );
    expect(answer.structuredContent).toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
    const awaited = await call(mcp, 'await_command_result', { pending_id: id, wait_seconds: 0 });
    const s = structured(awaited);
    expect(s).toMatchObject({
      pending_id: id,
      status: 'SUCCEEDED',
      command: 'everything__get-structured-content',
    });
    expect((s.upstream_result as { structuredContent: unknown }).structuredContent).toEqual(
      answer.structuredContent,
    );
    expect(textOf(awaited)).toMatch(/^SUCCEEDED /);
    expect(awaited.content.slice(1)).toEqual(answer.content);
  });

  it('[c7.outcomes] its long-running tool past timeout_s is UNKNOWN/KilledAtDeadline', async () => {
    const { answer } = await decided(
      'everything__trigger-long-running-operation',
      { duration: 30, steps: 3 },
      'approve',
    );
    expect(structured(answer)).toMatchObject({ status: 'UNKNOWN', reason: 'KilledAtDeadline' });
  });
});

describe('the outcome table (our misbehaving server)', () => {
  it('[c7.outcomes] -32602 is ERROR/UpstreamRejected with code and message in detail', async () => {
    const { answer } = await decided('ours__reject', { text: 'r' }, 'approve');
    expect(structured(answer)).toMatchObject({ status: 'ERROR', reason: 'UpstreamRejected' });
    expect(String(structured(answer).detail)).toContain('-32602: ');
    expect(String(structured(answer).detail)).toContain('rejected on purpose');
  });

  it('[c7.outcomes] isError is ERROR/UpstreamToolError carrying upstream_result and its content blocks', async () => {
    const { answer } = await decided('ours__fail', { text: 'f' }, 'approve');
    expect(structured(answer)).toMatchObject({ status: 'ERROR', reason: 'UpstreamToolError' });
    expect((structured(answer).upstream_result as { isError: boolean }).isError).toBe(true);
    expect(answer.content.at(-1)).toEqual({ type: 'text', text: 'the tool failed on purpose' });
  });

  it('[c7.outcomes] any other JSON-RPC error is UNKNOWN/UpstreamError', async () => {
    const { answer } = await decided('ours__explode', { text: 'e' }, 'approve');
    expect(structured(answer)).toMatchObject({ status: 'UNKNOWN', reason: 'UpstreamError' });
  });

  it('[c7.outcomes] no answer within timeout_s is UNKNOWN/KilledAtDeadline, and the upstream hears notifications/cancelled', async () => {
    const { answer } = await decided('ours__hang', { text: 'h' }, 'approve');
    expect(structured(answer)).toMatchObject({ status: 'UNKNOWN', reason: 'KilledAtDeadline' });
    await waitFor(() => seen(oursLog).some((e) => e.cancelled === 'hang'), 'the upstream to hear the cancel');
  });

  it('[c7.outcomes] the server dying mid-call is UNKNOWN/DeliveryUnconfirmed; it is restarted and later calls work', async () => {
    const { answer } = await decided('ours__die', { text: 'd' }, 'approve');
    expect(structured(answer)).toMatchObject({ status: 'UNKNOWN', reason: 'DeliveryUnconfirmed' });
    await waitFor(async () => {
      const list = structured(await call(mcp, 'list_commands', {}));
      const ups = list.upstreams as Array<{ name: string; connected: boolean }>;
      return (
        ups.find((u) => u.name === 'ours')?.connected && seen(oursLog).filter((e) => e.started).length === 2
      );
    }, 'ours restarted and connected');
    const after = await decided('ours__echo', { text: 'after the restart' }, 'approve');
    expect(after.answer.structuredContent).toEqual({ echoed: { text: 'after the restart' } });
  });

  it('[c7.once] each approved call reached the upstream exactly once, with exactly the approved arguments', () => {
    const calls = seen(oursLog).filter((e) => e.call !== undefined);
    const byName = (n: string) => calls.filter((e) => e.call === n);
    for (const n of ['reject', 'fail', 'explode', 'hang', 'die']) expect(byName(n)).toHaveLength(1);
    expect(byName('echo')).toEqual([expect.objectContaining({ arguments: { text: 'after the restart' } })]);
  });

  it('[c7.twin] an identical call while the first is PENDING returns the first; a different one queues anew', async () => {
    const a = structured(await call(mcp, 'once__echo', { text: 'twin' }));
    const b = structured(await call(mcp, 'once__echo', { text: 'twin' }));
    const c = structured(await call(mcp, 'once__echo', { text: 'not a twin' }));
    expect(a.status).toBe('PENDING');
    expect(b.pending_id).toBe(a.pending_id);
    expect(c.pending_id).not.toBe(a.pending_id);
    await call(mcp, 'cancel_command', { pending_id: a.pending_id });
    await call(mcp, 'cancel_command', { pending_id: c.pending_id });
  });

  it('[c7.outcomes] an upstream that is down when the call is to be sent: ERROR/UpstreamUnavailable, nothing sent', async () => {
    const pending = structured(await call(mcp, 'once__echo', { text: 'while down' }));
    expect(pending.status).toBe('PENDING');
    // It served its first start only: killed now, every restart exits at once and it stays down.
    const [first] = seen(onceLog).filter((e) => e.started);
    process.kill(first!.pid, 'SIGKILL');
    await waitFor(() => /"event":"upstream_down","upstream":"once"/.test(d.stderr()), 'once down');
    expect((await owner.approve(String(pending.pending_id))).ok).toBe(true);
    const done = structured(
      await call(mcp, 'await_command_result', { pending_id: pending.pending_id, wait_seconds: 60 }),
    );
    expect(done).toMatchObject({ status: 'ERROR', reason: 'UpstreamUnavailable' });
    expect(seen(onceLog).filter((e) => e.call !== undefined)).toEqual([]);
    // Its tools stay listed while it reconnects (contract 7).
    expect((await mcp.listTools()).tools.some((t) => t.name === 'once__echo')).toBe(true);
  });
});

describe('upstream tools as tasks (contract 10)', () => {
  it('[c10.tasks] [c7.answer] an upstream call made as a task: the handle at once, then tasks/result gives the upstream’s own answer', async () => {
    const { LegacyWire } = await import('./helpers/wire.js');
    const wire = await LegacyWire.open(d.info.mcp_url, { authorization: `Bearer ${d.mcpToken}` });
    const created = (
      await wire.request('tools/call', { name: 'ours__echo', arguments: { text: 'as a task' }, task: {} })
    ).response?.result as { task: { taskId: string; status: string } };
    expect(created.task.status).toBe('working');
    const id = created.task.taskId;
    const waiting = wire.request('tasks/result', { taskId: id });
    expect((await owner.approve(id)).ok).toBe(true);
    const answer = (await waiting).response?.result as {
      structuredContent: unknown;
      _meta: Record<string, unknown>;
    };
    expect(answer.structuredContent).toEqual({ echoed: { text: 'as a task' } });
    expect(answer._meta['ogf-broker/command']).toEqual({
      pending_id: id,
      status: 'SUCCEEDED',
      command: 'ours__echo',
    });
  });
});
