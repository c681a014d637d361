/**
 * The tools `tools/list` publishes (contract 3.1), as one changing set: every source's tools and the edge's
 * own lifecycle tools (./tools.ts builds it), each with the function that answers its calls, so a call can
 * only reach a tool that is listed. When the set changes (an upstream connects or changes its tools,
 * section 7), `replace()` tells every listener (each 2025-era session, the 2026-07-28 subscription bus),
 * which then tells its clients with `notifications/tools/list_changed`. Nothing is sent when what a client
 * sees did not actually change.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Command } from '../core/index.js';
import type { ProgressSink } from './progress.js';

/**
 * What a task-augmented call asks for (contract 10); `ttlMs` only in the 2025 form (params.task.ttl).
 * It and TaskStarted live with the call they shape, not in tasks.ts, so tasks.ts, this file and
 * generations.ts import one way (issue 20 item 4: no import circle).
 */
export interface TaskRequest {
  ttlMs?: number;
}

/** A gated call that was queued as a task: tools.ts hands it back instead of waiting. */
export class TaskStarted {
  constructor(readonly command: Command) {}
}

/** Who is calling and how to reach them while a call waits. */
export interface CallContext {
  /** The client name the MCP token belongs to (`local` for stdio). Recorded on every command. */
  client: string;
  /** Aborted when the client cancels the request or goes away: the wait ends, the command stays. */
  signal: AbortSignal;
  progress?: ProgressSink;
  /** The client asked for a task (contract 10): a gated call is queued and answered with its handle at once. */
  task?: TaskRequest;
  /**
   * Contract 19: present when the client declared `elicitation.url` and this generation lets the server ask
   * during a call (2025-11-25 only: server.ts) — sends one URL-mode `elicitation/create`.
   */
  elicitUrl?: (p: { url: string; message: string; elicitationId: string }) => Promise<unknown>;
}

/** Answers one call of one tool: a CallToolResult, or the task it was queued as. */
export type ToolCall = (
  args: Record<string, unknown>,
  call: CallContext,
) => Promise<CallToolResult | TaskStarted>;

/** A listed tool and how its calls are answered. */
export interface ListedTool {
  tool: Tool;
  call: ToolCall;
}

export type ToolsChanged = () => void;

export class ToolSet {
  #tools: readonly Tool[] = [];
  #byName = new Map<string, ListedTool>();
  readonly #listeners = new Set<ToolsChanged>();

  constructor(entries: readonly ListedTool[]) {
    this.#set(entries);
  }

  list(): Tool[] {
    return [...this.#tools];
  }

  names(): string[] {
    return this.#tools.map((t) => t.name);
  }

  get(name: string): ListedTool | undefined {
    return this.#byName.get(name);
  }

  /** Replaces the whole set; listeners hear of it only when something a client can see changed. */
  replace(entries: readonly ListedTool[]): void {
    const before = JSON.stringify(this.#tools);
    this.#set(entries);
    if (JSON.stringify(this.#tools) === before) return;
    for (const l of [...this.#listeners]) l();
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: ToolsChanged): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #set(entries: readonly ListedTool[]): void {
    this.#tools = entries.map((e) => e.tool);
    this.#byName = new Map(entries.map((e) => [e.tool.name, e]));
  }
}
