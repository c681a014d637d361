/**
 * Tasks as a client nobody here wrote drives them (contracts.md 10): the @modelcontextprotocol/ext-tasks
 * requester over a v2 SDK Client, against the 2025 generation (its 2025-11-25 "v1" task protocol) and the
 * 2026-07-28 generation (the extension, through the raw dispatch the package asks the host for). The outcome
 * of a task is exactly the plain call's answer, and a cancel while under review ends it cancelled.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  type JsonRpcResponse,
  resultFromTaskOutcome,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import {
  assertModern,
  echoConfig,
  GENERATIONS,
  type Generation,
  httpClient,
  MODERN_OPTIONS,
  MODERN_VERSION,
  structured,
  TestOwner,
} from './helpers/mcp.js';
import { post } from './helpers/wire.js';

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

let nextId = 1;

/**
 * The host-owned raw dispatch ext-tasks requires for 2026-07-28 task traffic: one JSON-RPC POST with the
 * standard headers (SEP-2243, and Mcp-Name = taskId for tasks/*), answered as JSON or SSE.
 */
function rawDispatch(url: string, token: string) {
  return async (request: unknown): Promise<JsonRpcResponse> => {
    const r = request as { method: string; params?: Record<string, unknown> };
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': r.method,
    };
    const name = r.method === 'tools/call' ? r.params?.name : r.params?.taskId;
    if (typeof name === 'string') headers['mcp-name'] = name;
    const answer = await post(url, { jsonrpc: '2.0', id: nextId++, ...r }, headers);
    const response = answer.response;
    if (response?.error !== undefined) return { kind: 'error', error: response.error as never };
    return { kind: 'result', result: (response?.result ?? {}) as never };
  };
}

async function taskSession(generation: Generation): Promise<{ client: Client; session: TaskEnabledSession }> {
  const headers = { authorization: `Bearer ${d.mcpToken}` };
  const client = new Client(
    { name: 'ext-tasks-test', version: '1.0.0' },
    generation === 'modern' ? MODERN_OPTIONS : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(d.info.mcp_url), { requestInit: { headers } }),
  );
  if (generation === 'modern') {
    assertModern(client);
    const session = createTaskSessionFromClient(client, {
      endpointId: `ogf-broker-${generation}`,
      rawDispatch: rawDispatch(d.info.mcp_url, d.mcpToken),
      v2RequestFraming: {
        protocolVersion: MODERN_VERSION,
        clientInfo: { name: 'ext-tasks-test', version: '1.0.0' },
        clientCapabilities: {},
      },
    });
    return { client, session };
  }
  expect(client.getProtocolEra()).toBe('legacy');
  return { client, session: createTaskSessionFromClient(client, { endpointId: `ogf-broker-${generation}` }) };
}

/** The plain call's answer for a pending_id, from a plain 2025 client. */
async function plainAnswer(id: string): Promise<Record<string, unknown>> {
  const plain = await httpClient(d.info.mcp_url, d.mcpToken);
  try {
    const r = await plain.callTool({
      name: 'await_command_result',
      arguments: { pending_id: id, wait_seconds: 0 },
    });
    return { content: r.content, structuredContent: r.structuredContent };
  } finally {
    await plain.close();
  }
}

describe.each(GENERATIONS)('[c10.tasks] the ext-tasks client, %s generation', (generation) => {
  let client: Client;
  let session: TaskEnabledSession;
  beforeAll(async () => {
    ({ client, session } = await taskSession(generation));
  });
  afterAll(async () => {
    await session?.close();
    await client?.close();
  });

  it('sees the server able to run tasks', () => {
    expect(session.capabilities.execution).toBe(true);
    expect(session.capabilities.cancellation).toBe(true);
  });

  it('runs run_command_wait as a task: the handle at once, the owner approves, the outcome is the plain answer', async () => {
    const execution = await session.callTool(
      'run_command_wait',
      { command: 'echo', args: { word: `ext${generation}` } },
      { task: { preference: 'require' } },
    );
    expect(execution.kind).toBe('task');
    if (execution.kind !== 'task') return;
    const id = execution.handle.taskId;
    expect((await session.task(id).snapshot()).status).toBe('working');
    await waitFor(() => owner.views.get(id), 'the owner to see the task');
    expect((await owner.approve(id)).ok).toBe(true);
    const { outcome } = await execution.settle();
    // On failure, say why (a TaskFailedError's message is not enumerable).
    const why = outcome.status === 'failed' ? outcome.error.message : '';
    expect(outcome.status, why).toBe('completed');
    const answer = resultFromTaskOutcome(outcome) as Record<string, unknown>;
    expect(structured(answer as never)).toMatchObject({
      pending_id: id,
      status: 'SUCCEEDED',
      stdout: `said ext${generation}`,
    });
    expect({ content: answer.content, structuredContent: answer.structuredContent }).toEqual(
      await plainAnswer(id),
    );
  });

  it('cancels while under review: the outcome is cancelled and the command DENIED/CancelledByCaller', async () => {
    const execution = await session.callTool(
      'run_command_wait',
      { command: 'echo', args: { word: `cancel${generation}` } },
      { task: { preference: 'require' } },
    );
    expect(execution.kind).toBe('task');
    if (execution.kind !== 'task') return;
    const id = execution.handle.taskId;
    await execution.cancel();
    const view = await waitFor(async () => {
      const v = await session.task(id).snapshot();
      return v.status === 'cancelled' ? v : undefined;
    }, 'the task to be cancelled');
    expect(view.status).toBe('cancelled');
    expect((await plainAnswer(id)).structuredContent).toMatchObject({
      status: 'DENIED',
      reason: 'CancelledByCaller',
    });
  });
});
