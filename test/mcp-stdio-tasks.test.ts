/**
 * Tasks through `ogf-broker mcp-stdio` (contracts.md 10, 1.1), on the raw stdio wire (newline-delimited
 * JSON-RPC on the real child's stdin/stdout) of both generations: the 2025-11-25 form (initialize, then
 * params.task, tasks/get, tasks/result, tasks/cancel, tasks/list) and the 2026-07-28 extension (every request
 * carries the envelope; resultType "task", the answer inline in tasks/get). The v2 SDK Client itself refuses a
 * resultType "task" answer to tools/call (UNSUPPORTED_RESULT_TYPE; ext-tasks asks the host for a raw dispatch
 * for the same reason), hence the raw wire.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, exited, ROOT, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { echoConfig, GENERATIONS, type Generation, TestOwner } from './helpers/mcp.js';
import { MODERN, TASKS_EXTENSION } from './helpers/wire.js';

type Json = Record<string, unknown>;
interface Answer {
  result?: Json;
  error?: { code: number; message: string };
}

/** A real mcp-stdio child spoken to line by line. */
class RawStdio {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, (a: Answer) => void>();
  #buf = '';
  #id = 1;

  constructor(
    dataDir: string,
    readonly generation: Generation,
  ) {
    this.#child = spawn(process.execPath, [CLI, 'mcp-stdio', '--data-dir', dataDir], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    this.#child.stdout.on('data', (b: Buffer) => {
      this.#buf += b.toString();
      for (let i = this.#buf.indexOf('\n'); i >= 0; i = this.#buf.indexOf('\n')) {
        const line = this.#buf.slice(0, i);
        this.#buf = this.#buf.slice(i + 1);
        const m = JSON.parse(line) as Json & { id?: number };
        if (typeof m.id === 'number' && ('result' in m || 'error' in m))
          this.#pending.get(m.id)?.(m as Answer);
      }
    });
  }

  #write(m: Json): void {
    this.#child.stdin.write(`${JSON.stringify(m)}\n`);
  }

  request(method: string, params: Json = {}): Promise<Answer> {
    const id = this.#id++;
    const p =
      this.generation === 'modern'
        ? {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'raw-stdio', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
            },
          }
        : params;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#write({ jsonrpc: '2.0', id, method, params: p });
    });
  }

  async open(): Promise<Answer> {
    if (this.generation === 'modern') return this.request('server/discover');
    const init = await this.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw-stdio', version: '1' },
    });
    this.#write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return init;
  }

  async close(): Promise<void> {
    this.#child.stdin.end();
    await exited(this.#child);
  }
}

function ok(a: Answer): Json {
  expect(a.error, JSON.stringify(a.error)).toBeUndefined();
  return a.result as Json;
}

let d: RunningDaemon;
let owner: TestOwner;
beforeAll(async () => {
  d = await startDaemon({ config: echoConfig() });
  owner = await TestOwner.connect(d);
});
afterAll(async () => {
  owner?.close();
  await d?.stop();
});

describe.each(GENERATIONS)('[c10.tasks] tasks through mcp-stdio, %s generation', (generation) => {
  let io: RawStdio;
  beforeAll(async () => {
    io = new RawStdio(d.dataDir, generation);
    const opened = ok(await io.open());
    const caps = opened.capabilities as Json;
    if (generation === 'modern') expect(caps.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    else expect(caps.tasks).toMatchObject({ requests: { tools: { call: {} } } });
  });
  afterAll(async () => {
    await io?.close();
  });

  const call = (word: string) => ({
    name: 'run_command_wait',
    arguments: { command: 'echo', args: { word } },
    ...(generation === 'legacy' ? { task: {} } : {}),
  });
  const taskIdOf = (r: Json) => String(generation === 'legacy' ? (r.task as Json).taskId : r.taskId);
  /** The task's answer once completed, in this generation's form. */
  const answerOf = async (id: string): Promise<Json> => {
    if (generation === 'legacy') return ok(await io.request('tasks/result', { taskId: id }));
    const t = await waitFor(async () => {
      const x = ok(await io.request('tasks/get', { taskId: id }));
      return x.status === 'completed' ? x : undefined;
    }, 'the task to complete');
    return t.result as Json;
  };

  it('answers the handle at once; the task works under review and completes with the answer on approval', async () => {
    const created = ok(await io.request('tools/call', call(`stdio${generation}`)));
    if (generation === 'modern')
      expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 86_400_000 });
    else expect(created.task).toMatchObject({ status: 'working', ttl: 86_400_000 });
    const id = taskIdOf(created);
    expect(ok(await io.request('tasks/get', { taskId: id })).status).toBe('working');
    expect(
      owner.views.get(id) ?? (await waitFor(() => owner.views.get(id), 'the owner to see it')),
    ).toMatchObject({
      client: 'local',
    });
    expect((await owner.approve(id)).ok).toBe(true);
    const answer = await answerOf(id);
    expect(answer.structuredContent).toMatchObject({
      pending_id: id,
      status: 'SUCCEEDED',
      stdout: `said stdio${generation}`,
    });
  });

  it('cancels while under review (cancelled, DENIED/CancelledByCaller); an unknown id is an error', async () => {
    const id = taskIdOf(ok(await io.request('tools/call', call('cancelme'))));
    ok(await io.request('tasks/cancel', { taskId: id }));
    expect(ok(await io.request('tasks/get', { taskId: id })).status).toBe('cancelled');
    const plain = ok(
      await io.request('tools/call', {
        name: 'await_command_result',
        arguments: { pending_id: id, wait_seconds: 0 },
      }),
    );
    expect(plain.structuredContent).toMatchObject({ status: 'DENIED', reason: 'CancelledByCaller' });
    expect((await io.request('tasks/get', { taskId: 'c_no_such_task_00' })).error?.code).toBe(-32602);
  });
});
