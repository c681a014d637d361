/**
 * A task is its command (contracts.md 10, 2 rule 4): kill -9 the daemon between the handle and the approval,
 * start it again on the same data dir, and the task is still there — a run_command_wait task still `working`
 * until the owner approves it, a cue's task `completed` with DENIED/SessionSecretNotRetained (its session
 * secret lived in memory only). In both generations.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { echoConfig, GENERATIONS, TestOwner } from './helpers/mcp.js';
import { LegacyWire, ModernWire, type RpcAnswer, TASKS_EXTENSION } from './helpers/wire.js';

const CONFIG = echoConfig({ ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge', delivery_timeout_ms: 500 } });
const CUE = {
  session_id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  action: 'nod',
  emotion: 'curious',
  intensity: 0.3,
  gaze: 'user',
};

function result(r: RpcAnswer): Record<string, unknown> {
  expect(r.response?.error, JSON.stringify(r.response?.error)).toBeUndefined();
  return r.response?.result as Record<string, unknown>;
}

interface Wire {
  request(method: string, params?: Record<string, unknown>): Promise<RpcAnswer>;
}

async function wireFor(generation: string, d: RunningDaemon): Promise<Wire> {
  const auth = { authorization: `Bearer ${d.mcpToken}` };
  return generation === 'modern'
    ? new ModernWire(d.info.mcp_url, auth, { extensions: { [TASKS_EXTENSION]: {} } })
    : LegacyWire.open(d.info.mcp_url, auth);
}

/** The task handle of a task-augmented call, in either form. */
async function startTask(
  wire: Wire,
  generation: string,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const r = result(
    await wire.request('tools/call', {
      name,
      arguments: args,
      ...(generation === 'legacy' ? { task: {} } : {}),
    }),
  );
  return String(generation === 'legacy' ? (r.task as Record<string, unknown>).taskId : r.taskId);
}

let d: RunningDaemon | undefined;
afterAll(async () => {
  await d?.stop();
});

describe('[c10.tasks-durable] tasks across kill -9 and a restart', () => {
  it.each(GENERATIONS)(
    'keeps the tasks (%s): the run still works, the cue is DENIED/SessionSecretNotRetained',
    async (generation) => {
      d = await startDaemon({ config: CONFIG });
      let wire = await wireFor(generation, d);
      const runId = await startTask(wire, generation, 'run_command_wait', {
        command: 'echo',
        args: { word: 'durable' },
      });
      const cueId = await startTask(wire, generation, 'ogf_cue', CUE);
      // No approval yet: the daemon dies between the handle and the approval.
      await d.kill();
      d = await startDaemon({ dataDir: d.dataDir });
      wire = await wireFor(generation, d);

      const run = result(await wire.request('tasks/get', { taskId: runId }));
      expect(run).toMatchObject({ taskId: runId, status: 'working' });
      const cue = result(await wire.request('tasks/get', { taskId: cueId }));
      expect(cue.status).toBe('completed');
      const cueAnswer =
        generation === 'legacy'
          ? result(await wire.request('tasks/result', { taskId: cueId }))
          : (cue.result as Record<string, unknown>);
      expect(cueAnswer.structuredContent).toMatchObject({
        status: 'DENIED',
        reason: 'SessionSecretNotRetained',
      });
      if (generation === 'legacy') {
        const listed = result(await wire.request('tasks/list')).tasks as Array<Record<string, unknown>>;
        expect(listed.map((t) => t.taskId).sort()).toEqual([runId, cueId].sort());
      }

      // The owner approves after the restart; the task completes with the command's answer.
      const owner = await TestOwner.connect(d);
      try {
        expect((await owner.approve(runId)).ok).toBe(true);
        const done = await waitFor(async () => {
          const t = result(await wire.request('tasks/get', { taskId: runId }));
          return t.status === 'completed' ? t : undefined;
        }, 'the run task to complete');
        const answer =
          generation === 'legacy'
            ? result(await wire.request('tasks/result', { taskId: runId }))
            : (done.result as Record<string, unknown>);
        expect(answer.structuredContent).toMatchObject({ status: 'SUCCEEDED', stdout: 'said durable' });
      } finally {
        owner.close();
        await d.stop();
      }
    },
  );
});
