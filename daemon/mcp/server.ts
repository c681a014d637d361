/**
 * One SDK `Server` speaking for one client, in one protocol generation (contract 10). We use the low-level
 * `Server` with our own `tools/list` and `tools/call` handlers (not `McpServer`) so the published schemas are
 * exactly ours and the SDK never answers a bad input with its own text: refusals are the product's (3.2).
 * Both generations get the same tools, answers and rules; only the task wire forms differ (./tasks.ts).
 */
import {
  type CallToolResult,
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { BrokerError } from '../base/index.js';
import type { BrokerApi, Command } from '../core/index.js';
import type { Generation } from './generations.js';
import { createTaskResult, registerTaskHandlers, TASKS_EXTENSION, taskRequestOf } from './tasks.js';
import { refusal } from './tools.js';
import { TaskStarted, type ToolSet } from './toolset.js';

export const SERVER_INSTRUCTIONS =
  'ogf-broker is an approval gate: every command or avatar cue you request waits for its owner to approve it. ' +
  'Use list_commands to see what you may ask for. A PENDING result is normal: keep its pending_id and call ' +
  'await_command_result; never resend the request. ERROR and UNKNOWN are final: never retry or replay them.';

/** A task handle escaping the SDK's `tools/call` result check (it only knows CallToolResult). */
export class TaskAnswer extends Error {
  constructor(readonly result: Result) {
    super('task handle');
  }
}

/**
 * The SDK's `Server` validates every `tools/call` result as a CallToolResult (Server._wrapHandler in
 * @modelcontextprotocol/server dist/mcp-*.mjs: "Enforces server-side validation for tools/call results"), and
 * v2 dropped the task interception that used to let a CreateTaskResult through. The documented subclass hook
 * `_wrapHandler` lets a task handle bypass that one check; every plain answer is still validated.
 *
 * No public extension point does this (issue 20 item 2; checked in @modelcontextprotocol/server 2.4.0 and
 * @modelcontextprotocol/ext-tasks 0.2.2, source and docs):
 * - `setRequestHandler('tools/call', …)`, 2-arg or 3-arg with schemas, and `McpServer.registerTool` all end in
 *   Server._wrapHandler, which validates against the era's tools/call schema: 2025-11-25's
 *   CallToolResultWireSchema refuses a body carrying `task` without `content` on purpose ("another result
 *   family cannot default into an empty tools/call success"); 2026-07-28's requires `content`. Adding
 *   `content` would change our wire answer.
 * - The only result that skips that validation is `resultType: 'input_required'` (multi-round-trip), not a task.
 * - ServerOptions (capabilities, cacheHints, inputRequired, jsonSchemaValidator…) has no result-validation
 *   switch; the encode seam (stampResultType) would pass `resultType: 'task'` through: only the check blocks.
 * - ext-tasks 0.2.2 ships a requester (client/), a 2025-11-25 receiver bound to a *Client* (sampling and
 *   elicitation only), and schemas/guards (core/); it never imports @modelcontextprotocol/server.
 * - Upstream: typescript-sdk issue #2637 (open) reports the missing server path; the `tasksPlugin()` PR #2066
 *   that would have added one was closed.
 * Seen: a plain handle returned without the override is answered -32602 "Invalid tools/call result: content is
 * required when the body carries 'task'…" (7 of test/mcp-tasks.test.ts's 12 tests fail).
 * Why the throw rather than answering outside the checked wrapper: the checked wrapper also validates the
 * request and runs the input-required/requestState seam *before* our handler, and those must stay in force
 * for task-augmented calls too; a throw is the only way out of it after the handler has run.
 */
export class GateServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (result instanceof TaskAnswer) throw result;
      return result;
    });
    return async (request, ctx) => {
      try {
        return await checked(request, ctx);
      } catch (e) {
        if (e instanceof TaskAnswer) return e.result;
        throw e;
      }
    };
  }
}

/** What a GateServer's `tools/call` handler returns to answer with a task handle instead of a CallToolResult. */
export function taskAnswer(handle: Record<string, unknown>): CallToolResult {
  return new TaskAnswer(handle) as unknown as CallToolResult;
}

export interface McpServerDeps {
  /** The listed tools, each with the function that answers its calls (./tools.ts). */
  tools: ToolSet;
  broker: BrokerApi;
  client: string;
  version: string;
  generation: Generation;
  /** The plain answer of a command (./tools.ts's EdgeTools.answer), for tasks/get and tasks/result. */
  answer: (command: Command) => CallToolResult;
}

/** Builds a server whose tool calls run as `deps.client`. */
export function createMcpServer(deps: McpServerDeps): Server {
  const { tools, client, generation } = deps;
  const capabilities: ServerCapabilities = { tools: { listChanged: true } };
  if (generation === 'modern') capabilities.extensions = { [TASKS_EXTENSION]: {} };
  else capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
  const server = new GateServer(
    { name: 'ogf-broker', title: 'ogf-broker', version: deps.version },
    { capabilities, instructions: SERVER_INSTRUCTIONS },
  );
  server.setRequestHandler('tools/list', () => ({ tools: tools.list() }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const listed = tools.get(name);
    // Contract 3.1 and the MCP spec: a call naming no listed tool is a protocol error, not a tool result.
    // The only such check: a call reaches a tool's own function only through its listing.
    if (listed === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${JSON.stringify(name)}; name must be one of the tools tools/list lists (${tools.names().join(', ')})`,
      );
    }
    const support = listed.tool.execution?.taskSupport ?? 'forbidden';
    let task = taskRequestOf(generation, request.params as { task?: unknown }, ctx);
    if (task !== undefined && support === 'forbidden') {
      // 2025-11-25: a task-augmented call to a tool whose taskSupport is forbidden SHOULD get -32601.
      // 2026-07-28: the server decides per call, so such a tool simply answers plainly.
      if (generation === 'legacy') {
        throw new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `Tool ${name} does not run as a task (execution.taskSupport is "forbidden"); call it without params.task`,
        );
      }
      task = undefined;
    }
    const progressToken = ctx.mcpReq._meta?.progressToken;
    let result: Awaited<ReturnType<typeof listed.call>>;
    try {
      result = await listed.call(request.params.arguments ?? {}, {
        client,
        signal: ctx.mcpReq.signal,
        progress: { token: progressToken, send: (n) => ctx.mcpReq.notify(n) },
        ...(task === undefined ? {} : { task }),
        // Contract 19: only the 2025-era push request lets a server ask while the call stays open (the SDK
        // throws on a 2026-07-28 request, whose only way is an input_required result that ends the call).
        ...(generation === 'legacy' && server.getClientCapabilities()?.elicitation?.url !== undefined
          ? { elicitUrl: (p) => ctx.mcpReq.elicitInput({ mode: 'url', ...p }) }
          : {}),
      });
    } catch (e) {
      // Contract 16: the shared database is out of reach, so nothing was queued or decided: a tool error.
      if (e instanceof BrokerError && e.code === 'Unavailable') return refusal('Unavailable', e.message);
      throw e;
    }
    if (result instanceof TaskStarted) return taskAnswer(createTaskResult(generation, result.command));
    return result;
  });
  if (generation === 'legacy') {
    // A 2025-era session hears of a changed tool set unsolicited, on its GET stream (contract 3.1); a
    // 2026-07-28 instance lives for one request, and its clients hear it on subscriptions/listen instead.
    const stop = tools.onChange(() => void server.sendToolListChanged().catch(() => {}));
    const previous = server.onclose;
    server.onclose = () => {
      stop();
      previous?.();
    };
  }
  registerTaskHandlers(server, generation, {
    broker: deps.broker,
    client,
    answer: (c) => deps.answer(c) as unknown as Record<string, unknown>,
  });
  return server;
}
