/**
 * Tasks (contracts.md 10): a task is the command. `taskId` is the `pending_id`, the command row is already
 * committed when the handle leaves (Store.insert is synchronous, `synchronous = FULL`), so a task survives a
 * restart exactly as its command does (rule 4 included) and is visible only to the client token that made it.
 *
 * Two wire forms of the same thing:
 *
 * ```
 *  2025-11-25 (params.task, tasks capability)      2026-07-28 (extension io.modelcontextprotocol/tasks)
 *  tools/call → { task: {taskId, status, ttl} }    tools/call → { resultType: "task", taskId, status, ttlMs }
 *  tasks/get     → Task                            tasks/get    → Task (+ result once completed)
 *  tasks/result  → waits, then the answer          tasks/cancel → {} (acknowledged; the task may go on)
 *  tasks/cancel  → Task, or -32602 once decided    tasks/update → {} (we never ask for input)
 *  tasks/list    → this client's tasks
 * ```
 *
 * Status: PENDING → `working`; DENIED/CancelledByCaller → `cancelled`; every other final status →
 * `completed` with the answer the plain call gives (an ERROR or UNKNOWN answer is a truthful completion).
 *
 * The v2 SDK has no task support of its own (its interception layer was removed, SEP-2663; see
 * docs/migration/upgrade-to-v2.md "Experimental tasks interception removed"), so the methods are
 * registered here with explicit schemas, which the SDK's era gate admits for `tasks/get` and
 * `tasks/cancel` on 2026-07-28 (isExtensionReusedRequestMethod in @modelcontextprotocol/core).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { BrokerApi } from '../core/index.js';
import { type Command, isFinal, summaryLine, toResult } from '../core/index.js';
import type { Generation } from './generations.js';
import type { TaskRequest } from './toolset.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
export const POLL_INTERVAL_MS = 2000;
export const TASK_TTL_DEFAULT_MS = 24 * 3600_000;
export const TASK_TTL_MAX_MS = 7 * 24 * 3600_000;
/** Tasks per tasks/list page. */
const LIST_PAGE = 50;
/**
 * Stored records (characters of JSON) one tasks/list page may parse: a task's record holds its arguments
 * and output (up to ~6 MiB each), so a page of 50 such could cost the event loop a second; a shorter page
 * with a nextCursor costs ~10 ms (issue 19 finding 3).
 */
const LIST_PAGE_CHARS = 2 * 1024 * 1024;

/** Contract 10: at least the requested ttl, at most 7 days, 1 day by default. */
export function taskTtl(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested) || requested <= 0) return TASK_TTL_DEFAULT_MS;
  return Math.min(Math.ceil(requested), TASK_TTL_MAX_MS);
}

type TaskStatus = 'working' | 'completed' | 'cancelled';

function statusOf(command: Command): TaskStatus {
  if (!isFinal(command)) return 'working';
  const p = command.phase;
  return p.state === 'denied' && p.reason === 'CancelledByCaller' ? 'cancelled' : 'completed';
}

function lastUpdated(command: Command): string {
  const r = toResult(command);
  const times = [command.created_at, r.decided_at, r.started_at, r.finished_at, r.reconciliation?.at];
  return (
    times
      .filter((t): t is string => t !== undefined)
      .sort()
      .at(-1) ?? command.created_at
  );
}

/** The common fields of a task, without the generation's ttl/poll field names. */
function core(command: Command) {
  return {
    taskId: command.id,
    status: statusOf(command),
    statusMessage: summaryLine(toResult(command)),
    createdAt: command.created_at,
    lastUpdatedAt: lastUpdated(command),
  };
}

/** The task as the 2025-11-25 form spells it. */
export function task2025(command: Command) {
  return {
    ...core(command),
    ttl: command.task?.ttl_ms ?? TASK_TTL_DEFAULT_MS,
    pollInterval: POLL_INTERVAL_MS,
  };
}

/** The task as the 2026-07-28 extension spells it. */
export function task2026(command: Command) {
  return {
    ...core(command),
    ttlMs: command.task?.ttl_ms ?? TASK_TTL_DEFAULT_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** The handle a task-augmented `tools/call` answers with at once. */
export function createTaskResult(generation: Generation, command: Command): Record<string, unknown> {
  if (generation === 'modern') return { resultType: 'task', ...task2026(command) };
  return {
    task: task2025(command),
    // The spec's hint for hosts that return control to the model while the task runs (2025-11-25 tasks).
    _meta: { 'io.modelcontextprotocol/model-immediate-response': core(command).statusMessage },
  };
}

/**
 * What the client asked for on this `tools/call`, or undefined for a plain call. 2025: `params.task`;
 * 2026-07-28: the extension among the request's own client capabilities (every gated call becomes a task).
 */
export function taskRequestOf(
  generation: Generation,
  params: { task?: unknown },
  ctx: ServerContext,
): TaskRequest | undefined {
  if (generation === 'modern') return declaresTasks(ctx) ? {} : undefined;
  const t = params.task;
  if (t === undefined || t === null || typeof t !== 'object') return undefined;
  const ttl = (t as { ttl?: unknown }).ttl;
  return typeof ttl === 'number' ? { ttlMs: ttl } : {};
}

function declaresTasks(ctx: ServerContext): boolean {
  // The envelope's keys are hidden from the SDK's public types; the key itself is exported.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return caps?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The answer a finished (or still pending) command gives, exactly as the plain tool call gives it. */
export type AnswerOf = (command: Command) => Record<string, unknown>;

export interface TaskDeps {
  broker: BrokerApi;
  client: string;
  answer: AnswerOf;
}

const taskIdParams = z.looseObject({ taskId: z.string() });
const listParams = z.looseObject({ cursor: z.string().optional() });
const updateParams = z.looseObject({ taskId: z.string(), inputResponses: z.unknown().optional() });

/** The same error for an unknown id and another client's task (contract 10, and 3 for pending_ids). */
function notFound(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    'Failed to retrieve task: taskId must name a task this client created, got one it did not',
  );
}

/** Registers the task methods of `generation` on one server instance acting for `client`. */
export function registerTaskHandlers(server: Server, generation: Generation, deps: TaskDeps): void {
  const { broker, client, answer } = deps;
  const owned = (id: string): Command => {
    const c = broker.get(id);
    if (c === undefined || c.client !== client) throw notFound();
    return c;
  };

  if (generation === 'modern') {
    // The extension's rule: a client that did not declare it gets -32021 for every tasks/* request.
    const requireExtension = (ctx: ServerContext) => {
      if (!declaresTasks(ctx)) {
        throw new MissingRequiredClientCapabilityError({
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        });
      }
    };
    server.setRequestHandler('tasks/get', { params: taskIdParams }, (params, ctx) => {
      requireExtension(ctx);
      const c = owned(params.taskId);
      const t = task2026(c);
      // The answer as the plain call carries it on this wire: a 2026-07-28 CallToolResult has resultType.
      return t.status === 'completed' ? { ...t, result: { ...answer(c), resultType: 'complete' } } : t;
    });
    server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async (params, ctx) => {
      requireExtension(ctx);
      const c = owned(params.taskId);
      // Cooperative cancel: while awaiting review it is cancel_command; once approved it changes nothing.
      if (c.phase.state === 'awaiting_review') await broker.cancel(c.id, client);
      return {};
    });
    server.setRequestHandler('tasks/update', { params: updateParams }, (params, ctx) => {
      requireExtension(ctx);
      owned(params.taskId);
      // We never ask for input (no task is ever input_required), so there is nothing to update.
      return {};
    });
    return;
  }

  server.setRequestHandler('tasks/get', { params: taskIdParams }, (params) => task2025(owned(params.taskId)));
  server.setRequestHandler('tasks/result', { params: taskIdParams }, async (params, ctx) => {
    let c = owned(params.taskId);
    // Blocks until the end (2025-11-25: tasks/result waits for a terminal status); the client may go away.
    while (!isFinal(c) && !ctx.mcpReq.signal.aborted) c = await broker.wait(c.id, 3600, ctx.mcpReq.signal);
    const result = answer(c);
    const meta = (result._meta as Record<string, unknown> | undefined) ?? {};
    return { ...result, _meta: { ...meta, [RELATED_TASK]: { taskId: c.id } } };
  });
  server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async (params) => {
    const c = owned(params.taskId);
    if (c.phase.state !== 'awaiting_review') {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        isFinal(c)
          ? `taskId ${c.id} is already in a terminal status (${statusOf(c)}); it cannot be cancelled`
          : `taskId ${c.id} can no longer be cancelled: the owner already approved it (${c.phase.state})`,
      );
    }
    const r = await broker.cancel(c.id, client);
    return task2025(r.ok ? r.command : owned(c.id));
  });
  server.setRequestHandler('tasks/list', { params: listParams }, async (params) => {
    // Issue 19 finding 3: this client's tasks only, by index, one bounded page (MCP pagination: the
    // cursor is opaque — the last taskId given — and a missing nextCursor is the end).
    const page = await broker.tasksOf(client, LIST_PAGE, LIST_PAGE_CHARS, params.cursor);
    if (page === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'cursor must be a nextCursor this server gave',
      );
    }
    const tasks = page.commands.map(task2025);
    const last = page.commands.at(-1);
    return page.more && last !== undefined ? { tasks, nextCursor: last.id } : { tasks };
  });
}
