/**
 * The tools' behaviour (contracts.md 3, 7, 10), independent of the transport. The edge lists the union of
 * the sources' tools (daemon/sources/source.ts) and its own lifecycle tools, and knows no kind of source:
 * a source's tool is validated by that source into a request, which is handed to the broker, waited on
 * (or answered as a task) and answered with contract 3.2's result as structuredContent plus text (one
 * summary line, then the JSON). `await_command_result`, `cancel_command` and `list_commands` are the edge's
 * own: they act on the commands of every source and queue nothing. Both the HTTP sessions and the stdio
 * front end reach the broker only through here (stdio relays to the daemon's HTTP endpoint).
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Logger, ToolErrorCode } from '../base/index.js';
import type { BrokerApi } from '../core/index.js';
import { type Command, type CommandResult, isFinal, summaryLine, toResult } from '../core/index.js';
import type { ImmediateAnswer, Source } from '../tool-kind/index.js';
import { parseAwaitInput, parseCancelInput, parseListInput } from './input.js';
import { startProgress } from './progress.js';
import { AWAIT_TOOL, CANCEL_TOOL, listCommandsTool } from './schemas.js';
import { taskTtl } from './tasks.js';
import { type CallContext, type ListedTool, TaskStarted, ToolSet } from './toolset.js';

export interface ToolDeps {
  broker: BrokerApi;
  /** In the order their tools are listed and their parts of list_commands merged. */
  sources: readonly Source[];
  log: Logger;
  /** Contract 19: the card's link and what waits, for a client that takes URL-mode elicitations. */
  ownerCard?: (command: Command) => { url: string; message: string };
}

/** How many commands' elicitations are remembered (a repeat beyond it would only tell the client again). */
const TOLD_MAX = 10_000;

/** The client's answer in one word for the log (it decides nothing: contract 19). */
function actionOf(answer: unknown): string {
  const a = (answer as { action?: unknown } | undefined)?.action;
  return typeof a === 'string' ? a.slice(0, 16) : 'unknown';
}

/** A tool-level refusal (contract 3.2): `isError`, text `<Code>: <field> must be <accepts>, got <what>`. */
export function refusal(code: ToolErrorCode, message: string): CallToolResult {
  const text = message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Contract 3.2's result as both structured content and text. */
export function resultContent(result: CommandResult | ImmediateAnswer): CallToolResult {
  // An immediate answer is DENIED, whose summary line names no command.
  const line = summaryLine({ command: '', ...result });
  return {
    content: [{ type: 'text', text: `${line}\n${JSON.stringify(result)}` }],
    structuredContent: result as unknown as Record<string, unknown>,
  };
}

/**
 * Contract 7: the result of 3.2 for a command; for a command whose outcome carries an upstream's answer
 * (`upstream_result`), its content is the summary line and JSON followed by the upstream's own blocks.
 */
export function commandContent(command: Command): CallToolResult {
  const base = resultContent(toResult(command));
  const blocks = 'outcome' in command.phase ? command.phase.outcome.upstream_result?.content : undefined;
  if (!Array.isArray(blocks)) return base;
  return { ...base, content: [...base.content, ...(blocks as CallToolResult['content'])] };
}

const UNKNOWN_ID = (id: string) =>
  `pending_id must name a command this client queued, got ${JSON.stringify(id)}, which it did not`;

/** The edge's tools: the set `tools/list` publishes and the answer each command's own call gives. */
export interface EdgeTools {
  tools: ToolSet;
  /** The answer a command's own call (or task) gives once it settles (contracts 3.2, 7, 10). */
  answer(command: Command): CallToolResult;
  /** Stops following the sources' changes. */
  close(): void;
}

/** Builds the tool set over `deps.sources`, following their changes (list_changed, contract 3.1). */
export function createEdgeTools(deps: ToolDeps): EdgeTools {
  const { sources } = deps;
  const calls = new EdgeCalls(deps);
  // The edge's own tools: they act on the commands of every source and queue nothing.
  const own: ListedTool[] = [
    { tool: AWAIT_TOOL, call: (args, call) => calls.awaitResult(args, call) },
    { tool: CANCEL_TOOL, call: (args, call) => calls.cancel(args, call) },
    {
      tool: listCommandsTool(
        sources.flatMap((s) => (s.listingSchema === undefined ? [] : [s.listingSchema])),
      ),
      call: async (args) => calls.list(args),
    },
  ];
  const entries = (): ListedTool[] => [
    ...sources.flatMap((source) =>
      source.tools().map((tool) => ({
        tool,
        call: (args: Record<string, unknown>, call: CallContext) =>
          calls.callSource(source, tool.name, args, call),
      })),
    ),
    ...own,
  ];

  const tools = new ToolSet(entries());
  // One set for every client: when a source's tools change (an upstream connects or lists new tools,
  // section 7), every client hears notifications/tools/list_changed (ToolSet.replace).
  const stops = sources.flatMap((s) =>
    s.onChange === undefined ? [] : [s.onChange(() => tools.replace(entries()))],
  );
  return {
    tools,
    answer: (command) => calls.answer(command),
    close: () => {
      for (const stop of stops) stop();
    },
  };
}

/** What each tool call does: a source's gated call, await_command_result, cancel_command, list_commands. */
class EdgeCalls {
  readonly #broker: BrokerApi;
  readonly #sources: readonly Source[];
  readonly #byKind: Map<string, Source>;
  readonly #deps: ToolDeps;
  /** Commands whose card link the AI's client was already sent (contract 19: once per command), bounded. */
  readonly #told = new Set<string>();

  constructor(deps: ToolDeps) {
    this.#deps = deps;
    this.#broker = deps.broker;
    this.#sources = deps.sources;
    this.#byKind = new Map(deps.sources.map((s) => [s.kind, s]));
  }

  /** The answer a command's own call gives: its source's, else contract 3.2's (and 7's). */
  answer(command: Command): CallToolResult {
    return this.#byKind.get(command.tool)?.answer?.(command) ?? commandContent(command);
  }

  /**
   * The gated-call path (contract 10): every source's tool ends here, so each one runs as a task when the
   * client asks for one (server.ts admits that only for taskSupport "optional"), and waits otherwise.
   */
  async callSource(
    source: Source,
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult | TaskStarted> {
    const prepared = source.prepare(name, args, call.client);
    switch (prepared.kind) {
      case 'refuse':
        return refusal(prepared.code, prepared.message);
      case 'answer':
        if (prepared.audit !== undefined) this.#broker.audit(prepared.audit);
        return resultContent(prepared.result);
      case 'submit': {
        const request =
          call.task === undefined
            ? prepared.request
            : // Marks a request made as a task, with its ttl (contract 10), so tasks/list finds it after a restart.
              { ...prepared.request, task: { ttl_ms: taskTtl(call.task.ttlMs) } };
        const submitted = await this.#broker.submit(request);
        if (!submitted.ok) {
          const message =
            submitted.code === 'RequestIdReused'
              ? (prepared.requestIdReused ?? submitted.message)
              : submitted.message;
          return refusal(submitted.code, message);
        }
        if (call.task !== undefined) return new TaskStarted(submitted.command);
        return this.#settle(submitted.command, prepared.waitSeconds, call, (c) => this.answer(c));
      }
    }
  }

  async awaitResult(args: Record<string, unknown>, call: CallContext): Promise<CallToolResult> {
    const input = parseAwaitInput(args);
    if (!input.ok) return refusal('InvalidArguments', input.message);
    const command = this.#owned(input.value.pending_id, call.client);
    if (command === undefined) return refusal('UnknownPendingId', UNKNOWN_ID(input.value.pending_id));
    // Contract 7: await_command_result always answers with the result of 3.2 (never an upstream's own).
    return this.#settle(command, input.value.wait_seconds, call, commandContent);
  }

  async cancel(args: Record<string, unknown>, call: CallContext): Promise<CallToolResult> {
    const input = parseCancelInput(args);
    if (!input.ok) return refusal('InvalidArguments', input.message);
    const id = input.value.pending_id;
    if (this.#owned(id, call.client) === undefined) return refusal('UnknownPendingId', UNKNOWN_ID(id));
    const cancelled = await this.#broker.cancel(id, call.client);
    if (!cancelled.ok) {
      const current = this.#broker.get(id);
      if (current === undefined) return refusal('UnknownPendingId', UNKNOWN_ID(id));
      return resultContent(toResult(current));
    }
    return resultContent(toResult(cancelled.command));
  }

  list(args: Record<string, unknown>): CallToolResult {
    const input = parseListInput(args);
    if (!input.ok) return refusal('InvalidArguments', input.message);
    // Contract 3.1: each source's part, merged in source order (the catalog, the bridge, the upstreams).
    const parts = this.#sources.flatMap((s) => (s.listing === undefined ? [] : [s.listing()]));
    const listing = Object.assign({}, ...parts.map((p) => p.fields)) as Record<string, unknown>;
    const summary = parts.flatMap((p) => (p.summary === undefined ? [] : [p.summary])).join('; ');
    return {
      content: [{ type: 'text', text: `${summary}.\n${JSON.stringify(listing)}` }],
      structuredContent: listing,
    };
  }

  /** Watches a command until final or `seconds` pass (rule 7: then it is simply still PENDING). */
  async #settle(
    command: Command,
    seconds: number,
    call: CallContext,
    answerOf: (c: Command) => CallToolResult,
  ): Promise<CallToolResult> {
    if (isFinal(command) || seconds === 0) return answerOf(command);
    this.#tellOwnerThroughClient(command, call);
    const broker = this.#broker;
    const stop = startProgress(call.progress, seconds, () => {
      const now = broker.get(command.id) ?? command;
      return `${now.command} ${now.id} is ${now.phase.state.replace('_', ' ')}; still waiting`;
    });
    try {
      return answerOf(await broker.wait(command.id, seconds, call.signal));
    } finally {
      stop();
    }
  }

  /**
   * Contract 19: a call that stays open waiting for the owner sends the client one URL-mode elicitation
   * with the card's link, once per command. Whatever the client answers decides nothing.
   */
  #tellOwnerThroughClient(command: Command, call: CallContext): void {
    const card = this.#deps.ownerCard?.(command);
    if (call.elicitUrl === undefined || card === undefined || command.phase.state !== 'awaiting_review')
      return;
    const told = this.#told;
    if (told.has(command.id)) return;
    told.add(command.id);
    if (told.size > TOLD_MAX) told.delete(told.values().next().value!);
    const log = this.#deps.log;
    call.elicitUrl({ ...card, elicitationId: randomUUID() }).then(
      (answer) => log.log('info', 'elicitation_answered', { id: command.id, action: actionOf(answer) }),
      (e: unknown) =>
        log.log('info', 'elicitation_unanswered', { id: command.id, error: (e as Error)?.message }),
    );
  }

  #owned(id: string, client: string): Command | undefined {
    const command = this.#broker.get(id);
    // Another client's command is answered exactly like a missing one (contract 3: visible only to its creator).
    return command !== undefined && command.client === client ? command : undefined;
  }
}
