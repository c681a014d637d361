/**
 * The five tools' behaviour (contracts.md 3), independent of the transport: validate the input in the
 * product, hand the request to the broker, wait, and answer with contract 3.2's result as structuredContent
 * plus text (one summary line, then the JSON). Both the HTTP sessions and the stdio front end reach the
 * broker only through here (stdio relays to the daemon's HTTP endpoint).
 */
import { type CallToolResult, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { iso } from '../clock.js';
import type { EdgeContext, SubmitRequest } from '../context.js';
import { type Command, isFinal } from '../core/lifecycle.js';
import { type CommandResult, summaryLine, toResult } from '../core/result.js';
import type { ToolErrorCode } from '../errors.js';
import { parseToolInput } from './input.js';
import { type ProgressSink, startProgress } from './progress.js';
import { TOOL_NAMES, type ToolName } from './schemas.js';
import { type TaskRequest, TaskStarted, taskTtl } from './tasks.js';

/** Who is calling and how to reach them while a call waits. */
export interface CallContext {
  /** The client name the MCP token belongs to (`local` for stdio). Recorded on every command. */
  client: string;
  /** Aborted when the client cancels the request or goes away: the wait ends, the command stays. */
  signal: AbortSignal;
  progress?: ProgressSink;
  /** The client asked for a task (contract 10): a gated call is queued and answered with its handle at once. */
  task?: TaskRequest;
}

export type ToolDeps = Pick<EdgeContext, 'broker' | 'catalog' | 'cues' | 'log' | 'upstreams'>;

export type ToolHandler = (
  name: string,
  args: Record<string, unknown> | undefined,
  call: CallContext,
) => Promise<CallToolResult | TaskStarted>;

/** True when `name` is one of our tools. */
export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** A tool-level refusal (contract 3.2): `isError`, text `<Code>: <field> must be <accepts>, got <what>`. */
export function refusal(code: ToolErrorCode, message: string): CallToolResult {
  const text = message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Contract 3.2's result as both structured content and text. */
export function resultContent(result: CommandResult | FeatureOffResult): CallToolResult {
  const line = summaryLine({ command: 'ogf.cue', ...result });
  return {
    content: [{ type: 'text', text: `${line}\n${JSON.stringify(result)}` }],
    structuredContent: result as unknown as Record<string, unknown>,
  };
}

/**
 * Contract 7: the result of 3.2 for a command; for an upstream call that got an answer it carries
 * `upstream_result`, and its content is the summary line and JSON followed by the upstream's own blocks.
 */
export function commandContent(command: Command): CallToolResult {
  const base = resultContent(toResult(command));
  const blocks = 'outcome' in command.phase ? command.phase.outcome.upstream_result?.content : undefined;
  if (command.tool !== 'upstream' || !Array.isArray(blocks)) return base;
  return { ...base, content: [...base.content, ...(blocks as CallToolResult['content'])] };
}

/**
 * Contract 7: the answer of the exposed upstream tool itself (and of its task). SUCCEEDED: the upstream's
 * result unchanged plus `_meta["ogf-broker/command"]`; anything else: the result of 3.2.
 */
export function upstreamAnswer(command: Command): CallToolResult {
  const p = command.phase;
  if (p.state !== 'succeeded' || p.outcome.upstream_result === undefined) return commandContent(command);
  const result = p.outcome.upstream_result;
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  return {
    ...(result as unknown as CallToolResult),
    _meta: {
      ...meta,
      'ogf-broker/command': { pending_id: command.id, status: 'SUCCEEDED', command: command.command },
    },
  };
}

/** The answer a command's own call (or task) gives once it settles (contracts 3.2, 7, 10). */
export function callAnswer(command: Command): CallToolResult {
  return command.tool === 'upstream' ? upstreamAnswer(command) : resultContent(toResult(command));
}

/** Contract 3.3: the feature-off answer is exactly these three fields (no pending_id, no command). */
export interface FeatureOffResult {
  status: 'DENIED';
  reason: 'OgfBridgeNotConfigured';
  detail: string;
}

const FEATURE_OFF_DETAIL =
  'The OGF bridge is not configured on this broker (ogf_bridge in its config), so nothing was queued or sent.';

const UNKNOWN_ID = (id: string) =>
  `pending_id must name a command this client queued, got ${JSON.stringify(id)}, which it did not`;

/** Marks a request made as a task, with its ttl (contract 10), so tasks/list finds it after a restart too. */
function withTask(request: SubmitRequest, call: CallContext): SubmitRequest {
  return call.task === undefined ? request : { ...request, task: { ttl_ms: taskTtl(call.task.ttlMs) } };
}

/** Builds the handler for `tools/call`. */
export function createToolHandler(deps: ToolDeps): ToolHandler {
  const { broker, catalog, log } = deps;

  /** Watches a command until final or `seconds` pass (rule 7: then it is simply still PENDING). */
  async function settle(
    command: Command,
    seconds: number,
    call: CallContext,
    answer: (c: Command) => CallToolResult = commandContent,
  ): Promise<CallToolResult> {
    if (isFinal(command) || seconds === 0) return answer(command);
    const stop = startProgress(call.progress, seconds, () => {
      const now = broker.get(command.id) ?? command;
      return `${now.command} ${now.id} is ${now.phase.state.replace('_', ' ')}; still waiting`;
    });
    try {
      return answer(await broker.wait(command.id, seconds, call.signal));
    } finally {
      stop();
    }
  }

  /**
   * The gated-call path (contract 10): every tool that queues a command for the owner ends here, so each one
   * (upstream tools too, later) runs as a task when the client asks for one, and waits otherwise.
   */
  function gated(
    command: Command,
    seconds: number,
    call: CallContext,
  ): Promise<CallToolResult> | TaskStarted {
    return call.task === undefined ? settle(command, seconds, call, callAnswer) : new TaskStarted(command);
  }

  function owned(id: string, client: string): Command | undefined {
    const command = broker.get(id);
    // Another client's command is answered exactly like a missing one (contract 3: visible only to its creator).
    return command !== undefined && command.client === client ? command : undefined;
  }

  return async (name, rawArgs, call) => {
    const upstreams = deps.upstreams;
    if (upstreams?.has(name)) {
      // Contract 7: validated against the upstream's own inputSchema in the product, then queued.
      const prepared = upstreams.prepare(name, rawArgs ?? {}, call.client);
      if (!prepared.ok) return refusal('InvalidArguments', prepared.message);
      const submitted = await broker.submit(withTask(prepared.request, call));
      // An upstream call carries no request_id, so only a PENDING cap can refuse it.
      if (!submitted.ok) return refusal(submitted.code, submitted.message);
      return gated(submitted.command, prepared.waitSeconds, call);
    }
    if (!isToolName(name)) {
      // Contract 3.1: an unknown tool is the JSON-RPC error -32602 naming it (the MCP spec's rule).
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${JSON.stringify(name)}; name must be one of ${TOOL_NAMES.join(', ')}`,
      );
    }
    const args = rawArgs ?? {};
    switch (name) {
      case 'ogf_cue': {
        const input = parseToolInput('ogf_cue', args);
        if (!input.ok) return refusal('InvalidArguments', input.message);
        const cues = deps.cues;
        if (cues === undefined) {
          // Contract 3.3: at once, no command, nothing to the owners, but the audit log records it.
          const { action, emotion, intensity, gaze, ttl_ms } = input.value;
          broker.audit({
            at: iso(Date.now()),
            actor: { kind: 'client', name: call.client },
            action: 'ogf_cue_refused',
            detail: {
              reason: 'OgfBridgeNotConfigured',
              cue: {
                action,
                emotion,
                intensity,
                gaze,
                ttl_ms,
                message_given: input.value.message !== undefined,
              },
            },
          });
          log.log('info', 'mcp_cue_refused', { client: call.client, reason: 'OgfBridgeNotConfigured' });
          return resultContent({
            status: 'DENIED',
            reason: 'OgfBridgeNotConfigured',
            detail: FEATURE_OFF_DETAIL,
          });
        }
        const submitted = await broker.submit(withTask(cues.prepare(input.value, call.client), call));
        // A cue carries no request_id, so only a PENDING cap can refuse it.
        if (!submitted.ok) return refusal(submitted.code, submitted.message);
        return gated(submitted.command, input.value.wait_seconds, call);
      }
      case 'run_command_wait': {
        const input = parseToolInput('run_command_wait', args);
        if (!input.ok) return refusal('InvalidArguments', input.message);
        const { command, justification, request_id, wait_seconds } = input.value;
        const prepared = catalog.prepare(command, input.value.args, call.client);
        if (!prepared.ok) return refusal(prepared.code, prepared.message);
        const request = { ...prepared.request };
        if (justification !== undefined) request.justification = justification;
        if (request_id !== undefined) request.request_id = request_id;
        const submitted = await broker.submit(withTask(request, call));
        if (!submitted.ok && submitted.code === 'TooManyPending') {
          return refusal('TooManyPending', submitted.message);
        }
        if (!submitted.ok) {
          return refusal(
            'RequestIdReused',
            `request_id must be new, or repeat its first request exactly (same command, args and justification), got ${JSON.stringify(request_id)}, already used by this client for a different request`,
          );
        }
        return gated(submitted.command, wait_seconds, call);
      }
      case 'await_command_result': {
        const input = parseToolInput('await_command_result', args);
        if (!input.ok) return refusal('InvalidArguments', input.message);
        const command = owned(input.value.pending_id, call.client);
        if (command === undefined) return refusal('UnknownPendingId', UNKNOWN_ID(input.value.pending_id));
        return settle(command, input.value.wait_seconds, call);
      }
      case 'cancel_command': {
        const input = parseToolInput('cancel_command', args);
        if (!input.ok) return refusal('InvalidArguments', input.message);
        const id = input.value.pending_id;
        if (owned(id, call.client) === undefined) return refusal('UnknownPendingId', UNKNOWN_ID(id));
        const cancelled = await broker.cancel(id, call.client);
        if (!cancelled.ok) {
          const current = broker.get(id);
          if (current === undefined) return refusal('UnknownPendingId', UNKNOWN_ID(id));
          return resultContent(toResult(current));
        }
        return resultContent(toResult(cancelled.command));
      }
      case 'list_commands': {
        const input = parseToolInput('list_commands', args);
        if (!input.ok) return refusal('InvalidArguments', input.message);
        const listing: Record<string, unknown> & { commands: ReturnType<typeof catalog.list> } = {
          commands: catalog.list(),
          ogf_bridge_configured: deps.cues !== undefined,
        };
        // Contract 3.1 (v2): each upstream, whether it is connected, and its exposed tool names (present when
        // the config names any upstream, so a daemon without them answers exactly as before).
        const ups = deps.upstreams?.listing() ?? [];
        if (ups.length > 0) listing.upstreams = ups;
        const names = listing.commands.map((c) => c.name).join(', ') || 'none';
        const bridge = deps.cues !== undefined ? 'configured' : 'not configured';
        return {
          content: [
            {
              type: 'text',
              text: `${listing.commands.length} catalog command(s): ${names}; OGF bridge ${bridge}.\n${JSON.stringify(listing)}`,
            },
          ],
          structuredContent: listing as unknown as Record<string, unknown>,
        };
      }
    }
  };
}
