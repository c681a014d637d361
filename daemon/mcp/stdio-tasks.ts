/**
 * Tasks through `mcp-stdio` (contract 10). The stdio front end relays to the daemon over a 2025 session
 * (./relay.ts), so the daemon always speaks the 2025-11-25 task form to it; this file passes that form
 * through to a 2025 stdio client and translates it for a 2026-07-28 one (the extension's shapes: resultType
 * "task", ttlMs/pollIntervalMs, the answer inline in tasks/get, an acknowledged cancel). The daemon stays the
 * only judge of what is a task and whose it is; nothing here keeps state.
 */
import type { Client } from '@modelcontextprotocol/client';
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Generation } from './generations.js';
import type { Relay } from './relay.js';
import { TASKS_EXTENSION, taskRequestOf } from './tasks.js';

const anyResult = z.looseObject({});
const taskIdParams = z.looseObject({ taskId: z.string() });
const listParams = z.looseObject({ cursor: z.string().optional() });
type Json = Record<string, unknown>;

/** The 2025-11-25 Task the daemon gave, in the 2026-07-28 extension's spelling. */
function toModern(task: Json): Json {
  const { ttl, pollInterval, ...rest } = task;
  return { ...rest, ttlMs: ttl ?? null, pollIntervalMs: pollInterval };
}

/** One raw request over the relay link (the typed client has no task methods, by design of the v2 SDK). */
function send(relay: Relay, method: string, params: Json, ctx: ServerContext): Promise<Json> {
  return relay.call(
    (c: Client) =>
      c.request({ method, params } as never, anyResult, { signal: ctx.mcpReq.signal, timeout: 3_600_000 }),
    // A task-augmented tools/call queues a command: never resent after a reset (relay.ts isReconnectable).
    method !== 'tools/call',
  ) as Promise<Json>;
}

/**
 * A task-augmented `tools/call`, relayed: the daemon's handle, in this connection's form. Undefined when the
 * call is not a task (the caller relays it as a plain call).
 */
export async function relayTaskCall(
  relay: Relay,
  generation: Generation,
  params: { name: string; arguments?: Json; task?: unknown },
  ctx: ServerContext,
): Promise<Json | undefined> {
  const task = taskRequestOf(generation, params, ctx);
  if (task === undefined) return undefined;
  const call = {
    name: params.name,
    arguments: params.arguments ?? {},
    task: task.ttlMs === undefined ? {} : { ttl: task.ttlMs },
  };
  let created: Json;
  try {
    created = await send(relay, 'tools/call', call, ctx);
  } catch (e) {
    // 2026-07-28: the server decides per call, so a tool that never runs as a task is answered plainly.
    if (
      generation === 'modern' &&
      e instanceof ProtocolError &&
      e.code === ProtocolErrorCode.MethodNotFound
    ) {
      return undefined;
    }
    throw e;
  }
  if (generation === 'legacy') return created;
  return { resultType: 'task', ...toModern(created.task as Json) };
}

/** Registers the relayed task methods for one stdio connection of `generation`. */
export function registerRelayTaskHandlers(server: Server, generation: Generation, relay: Relay): void {
  if (generation === 'legacy') {
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      server.setRequestHandler(method, { params: taskIdParams }, (params, ctx) =>
        send(relay, method, params, ctx),
      );
    }
    server.setRequestHandler('tasks/list', { params: listParams }, (params, ctx) =>
      send(relay, 'tasks/list', params, ctx),
    );
    return;
  }
  const requireExtension = (ctx: ServerContext) => {
    const envelope = ctx.mcpReq.envelope as Json | undefined;
    const caps = envelope?.['io.modelcontextprotocol/clientCapabilities'] as
      | { extensions?: Json }
      | undefined;
    if (caps?.extensions?.[TASKS_EXTENSION] === undefined) {
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
  };
  const get = async (taskId: string, ctx: ServerContext): Promise<Json> => {
    const task = toModern(await send(relay, 'tasks/get', { taskId }, ctx));
    if (task.status !== 'completed') return task;
    // The 2025 form keeps the answer behind tasks/result, which answers at once for a finished task.
    const { _meta, ...answer } = await send(relay, 'tasks/result', { taskId }, ctx);
    return { ...task, result: { ...answer, resultType: 'complete' } };
  };
  server.setRequestHandler('tasks/get', { params: taskIdParams }, (params, ctx) => {
    requireExtension(ctx);
    return get(params.taskId, ctx);
  });
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async (params, ctx) => {
    requireExtension(ctx);
    try {
      await send(relay, 'tasks/cancel', { taskId: params.taskId }, ctx);
    } catch (e) {
      // Once approved the 2025 form refuses; the extension acknowledges and the task goes on. An unknown
      // id is still an error: tasks/get says which it was.
      if (!(e instanceof ProtocolError)) throw e;
      await send(relay, 'tasks/get', { taskId: params.taskId }, ctx);
    }
    return {};
  });
  server.setRequestHandler(
    'tasks/update',
    { params: z.looseObject({ taskId: z.string() }) },
    async (params, ctx) => {
      requireExtension(ctx);
      await send(relay, 'tasks/get', { taskId: params.taskId }, ctx);
      return {};
    },
  );
}
