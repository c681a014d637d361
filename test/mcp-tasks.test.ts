/**
 * Tasks for the gated calls (contracts.md 10), on the raw wire of both forms — 2025-11-25 (`params.task`,
 * tasks/get, tasks/result, tasks/cancel, tasks/list) and the 2026-07-28 extension `io.modelcontextprotocol/tasks`
 * (resultType "task", tasks/get with the answer inline, tasks/cancel acknowledged) — with a real owner. The
 * task is the command: taskId = pending_id, and its answer is exactly what the plain call answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { echoConfig, makeClientToken, TestOwner } from './helpers/mcp.js';
import { LegacyWire, ModernWire, type RpcAnswer, TASKS_EXTENSION } from './helpers/wire.js';

const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };
const UUID = '6b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';

let d: RunningDaemon;
let owner: TestOwner;
let auth: Record<string, string>;
let seq = 0;

beforeAll(async () => {
  // A bridge nobody listens on: an approved cue fails for sure (BridgeUnreachable), a truthful ERROR answer.
  d = await startDaemon({
    config: echoConfig({ ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge', delivery_timeout_ms: 500 } }),
  });
  owner = await TestOwner.connect(d);
  auth = { authorization: `Bearer ${d.mcpToken}` };
});
afterAll(async () => {
  owner?.close();
  await d?.stop();
});

/** A run_command_wait call unlike every other one in this file. */
function run(): Record<string, unknown> {
  seq++;
  return {
    name: 'run_command_wait',
    arguments: {
      command: 'echo',
      args: { word: `w${'x'.repeat(seq % 15)}` },
      wait_seconds: 50,
      request_id: `t${seq}-${Date.now()}`,
    },
  };
}

/** An ogf_cue call unlike every other one (the twin rule would merge identical ones). */
function cue(): Record<string, unknown> {
  seq++;
  return {
    name: 'ogf_cue',
    arguments: {
      session_id: UUID,
      action: 'wave',
      emotion: 'happy',
      intensity: 0.5,
      gaze: 'user',
      ttl_ms: 100 + seq,
    },
  };
}

function result(r: RpcAnswer): Record<string, unknown> {
  expect(r.response?.error, JSON.stringify(r.response?.error)).toBeUndefined();
  return r.response?.result as Record<string, unknown>;
}

/** The plain answer for a pending_id: what await_command_result (the plain call) returns now. */
async function plainAnswer(wire: LegacyWire, id: string): Promise<Record<string, unknown>> {
  const r = result(
    await wire.request('tools/call', {
      name: 'await_command_result',
      arguments: { pending_id: id, wait_seconds: 0 },
    }),
  );
  return { content: r.content, structuredContent: r.structuredContent };
}

describe('[c10.tasks] the 2025-11-25 form (params.task)', () => {
  let wire: LegacyWire;
  beforeAll(async () => {
    wire = await LegacyWire.open(d.info.mcp_url, auth);
  });

  for (const make of [run, cue]) {
    it(`${make === run ? 'run_command_wait' : 'ogf_cue'}: the handle at once, working while under review, then the plain answer`, async () => {
      const call = make();
      const created = result(await wire.request('tools/call', { ...call, task: { ttl: 60_000 } }));
      const task = created.task as Record<string, unknown>;
      expect(task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 2000 });
      expect(task.statusMessage).toMatch(/^PENDING /);
      expect(created.content).toBeUndefined();
      const id = String(task.taskId);
      // taskId = pending_id: the owner sees the very command.
      await waitFor(() => owner.views.get(id), 'the owner to see the task');
      expect(result(await wire.request('tasks/get', { taskId: id }))).toMatchObject({
        taskId: id,
        status: 'working',
      });
      const listed = result(await wire.request('tasks/list')).tasks as Array<Record<string, unknown>>;
      expect(listed.map((t) => t.taskId)).toContain(id);

      const waiting = wire.request('tasks/result', { taskId: id });
      expect((await owner.approve(id)).ok).toBe(true);
      const answer = result(await waiting);
      expect((answer._meta as Record<string, unknown>)['io.modelcontextprotocol/related-task']).toEqual({
        taskId: id,
      });
      const final = result(await wire.request('tasks/get', { taskId: id }));
      expect(final.status).toBe('completed');
      // Exactly the plain call's answer (content and structuredContent), whatever it says happened.
      expect({ content: answer.content, structuredContent: answer.structuredContent }).toEqual(
        await plainAnswer(wire, id),
      );
      const status = (answer.structuredContent as Record<string, unknown>).status;
      expect(status).toBe(make === run ? 'SUCCEEDED' : 'ERROR');
    });
  }

  it('tasks/cancel while awaiting review is cancel_command: cancelled, and the answer is DENIED/CancelledByCaller', async () => {
    const task = result(await wire.request('tools/call', { ...run(), task: {} })).task as Record<
      string,
      unknown
    >;
    const id = String(task.taskId);
    expect(task.ttl).toBe(24 * 3600_000);
    const cancelled = result(await wire.request('tasks/cancel', { taskId: id }));
    expect(cancelled).toMatchObject({ taskId: id, status: 'cancelled' });
    expect((await plainAnswer(wire, id)).structuredContent).toMatchObject({
      status: 'DENIED',
      reason: 'CancelledByCaller',
    });
    const again = await wire.request('tasks/cancel', { taskId: id });
    expect(again.response?.error?.code).toBe(-32602);
  });

  it('tasks/cancel once approved changes nothing: -32602, and the task goes on to its answer', async () => {
    const id = String(
      (result(await wire.request('tools/call', { ...run(), task: {} })).task as Record<string, unknown>)
        .taskId,
    );
    expect((await owner.approve(id)).ok).toBe(true);
    const r = await wire.request('tasks/cancel', { taskId: id });
    expect(r.response?.error?.code).toBe(-32602);
    expect(r.response?.error?.message).toMatch(/approved|terminal/);
    const answer = result(await wire.request('tasks/result', { taskId: id }));
    expect((answer.structuredContent as Record<string, unknown>).status).toBe('SUCCEEDED');
  });

  it('refuses params.task on a tool whose taskSupport is forbidden (-32601), and queues nothing', async () => {
    const r = await wire.request('tools/call', { name: 'list_commands', arguments: {}, task: {} });
    expect(r.response?.error?.code).toBe(-32601);
    expect(r.response?.error?.message).toContain('list_commands');
  });

  it("[c10.tasks-durable] another client gets the unknown-id error for this client's task", async () => {
    const id = String(
      (result(await wire.request('tools/call', { ...run(), task: {} })).task as Record<string, unknown>)
        .taskId,
    );
    const other = await LegacyWire.open(d.info.mcp_url, {
      authorization: `Bearer ${await makeClientToken(d, 'other2025')}`,
    });
    const theirs = await other.request('tasks/get', { taskId: id });
    const unknown = await other.request('tasks/get', { taskId: 'c_no_such_task_00' });
    expect(theirs.response?.error?.code).toBe(-32602);
    expect(theirs.response?.error).toEqual(unknown.response?.error);
    for (const method of ['tasks/result', 'tasks/cancel']) {
      expect((await other.request(method, { taskId: id })).response?.error).toEqual(unknown.response?.error);
    }
    const listed = result(await other.request('tasks/list')).tasks as Array<Record<string, unknown>>;
    expect(listed.map((t) => t.taskId)).not.toContain(id);
    // Still there for its own client.
    expect(result(await wire.request('tasks/get', { taskId: id })).status).toBe('working');
  });
});

describe('[c10.tasks] the 2026-07-28 extension (io.modelcontextprotocol/tasks)', () => {
  let wire: ModernWire;
  let legacy: LegacyWire;
  beforeAll(async () => {
    wire = new ModernWire(d.info.mcp_url, auth, WITH_TASKS);
    legacy = await LegacyWire.open(d.info.mcp_url, auth);
  });

  for (const make of [run, cue]) {
    it(`${make === run ? 'run_command_wait' : 'ogf_cue'}: every gated call is a task; tasks/get carries the plain answer once completed`, async () => {
      const created = result(await wire.request('tools/call', make()));
      expect(created).toMatchObject({
        resultType: 'task',
        status: 'working',
        ttlMs: 24 * 3600_000,
        pollIntervalMs: 2000,
      });
      expect(created.content).toBeUndefined();
      const id = String(created.taskId);
      await waitFor(() => owner.views.get(id), 'the owner to see the task');
      const working = result(await wire.request('tasks/get', { taskId: id }));
      expect(working).toMatchObject({ resultType: 'complete', taskId: id, status: 'working' });
      expect(working.result).toBeUndefined();
      expect((await owner.approve(id)).ok).toBe(true);
      const done = await waitFor(async () => {
        const t = result(await wire.request('tasks/get', { taskId: id }));
        return t.status === 'completed' ? t : undefined;
      }, 'the task to complete');
      const answer = done.result as Record<string, unknown>;
      expect({ content: answer.content, structuredContent: answer.structuredContent }).toEqual(
        await plainAnswer(legacy, id),
      );
    });
  }

  it('tasks/cancel while awaiting review: acknowledged, cancelled, DENIED/CancelledByCaller; once final it is acknowledged and nothing changes', async () => {
    const id = String(result(await wire.request('tools/call', run())).taskId);
    expect(result(await wire.request('tasks/cancel', { taskId: id }))).toMatchObject({
      resultType: 'complete',
    });
    const t = result(await wire.request('tasks/get', { taskId: id }));
    expect(t.status).toBe('cancelled');
    expect((await plainAnswer(legacy, id)).structuredContent).toMatchObject({
      status: 'DENIED',
      reason: 'CancelledByCaller',
    });
    // Approved, then a cancel: acknowledged, and the task still completes.
    const id2 = String(result(await wire.request('tools/call', run())).taskId);
    expect((await owner.approve(id2)).ok).toBe(true);
    expect(result(await wire.request('tasks/cancel', { taskId: id2 }))).toMatchObject({
      resultType: 'complete',
    });
    const done = await waitFor(async () => {
      const x = result(await wire.request('tasks/get', { taskId: id2 }));
      return x.status !== 'working' ? x : undefined;
    }, 'the approved task to end');
    expect(done.status).toBe('completed');
  });

  it('answers plainly a client that did not declare the extension, and refuses it tasks/get (-32021)', async () => {
    const plain = new ModernWire(d.info.mcp_url, auth);
    const r = result(
      await plain.request('tools/call', {
        ...run(),
        arguments: { ...(run().arguments as object), wait_seconds: 0 },
      }),
    );
    expect(r.resultType).toBe('complete');
    expect(r.structuredContent).toMatchObject({ status: 'PENDING' });
    const g = await plain.request('tasks/get', {
      taskId: String((r.structuredContent as Record<string, unknown>).pending_id),
    });
    expect(g.response?.error?.code).toBe(-32021);
  });

  it('has no tasks/list and no tasks/result (removed in 2026-07-28): -32601', async () => {
    expect((await wire.request('tasks/list')).response?.error?.code).toBe(-32601);
    const id = String(result(await wire.request('tools/call', run())).taskId);
    expect((await wire.request('tasks/result', { taskId: id })).response?.error?.code).toBe(-32601);
  });

  it("[c10.tasks-durable] another client gets the unknown-id error for this client's task", async () => {
    const id = String(result(await wire.request('tools/call', run())).taskId);
    const other = new ModernWire(
      d.info.mcp_url,
      { authorization: `Bearer ${await makeClientToken(d, 'other2026')}` },
      WITH_TASKS,
    );
    const theirs = await other.request('tasks/get', { taskId: id });
    const unknown = await other.request('tasks/get', { taskId: 'c_no_such_task_00' });
    expect(theirs.response?.error?.code).toBe(-32602);
    expect(theirs.response?.error).toEqual(unknown.response?.error);
    expect((await other.request('tasks/cancel', { taskId: id })).response?.error).toEqual(
      unknown.response?.error,
    );
    expect(result(await wire.request('tasks/get', { taskId: id })).status).toBe('working');
  });
});
