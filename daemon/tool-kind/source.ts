/**
 * A source (architecture.md "The house"): one kind of thing an AI may ask for — the `ogf_cue` tool, the
 * owner's argv catalog (`run_command_wait`), each upstream MCP server's tools. A source lists its tools
 * (name, schemas, annotations, `execution.taskSupport`), validates a call of one of them into a
 * `SubmitRequest` or a refusal, and names the executor that runs what it queues. The MCP edge lists the
 * union of the sources' tools and dispatches each call to the source that listed it; it never knows which
 * kinds exist.
 *
 * ```
 *  tools/call ──▶ edge: ToolSet.get(name) ──▶ source.prepare(name, args, client)
 *                                               ├─ submit ──▶ broker.submit ──▶ wait / task ──▶ answer
 *                                               ├─ refuse ──▶ isError "<Code>: <field> must be …" (3.2)
 *                                               └─ answer ──▶ at once, nothing queued (3.3 feature off)
 * ```
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { DenyReason, ToolErrorCode } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { AuditEntry, Command, Executor, SubmitRequest } from '../core/index.js';

/** A final answer given at once, without a command (contract 3.3: no pending_id). */
export interface ImmediateAnswer {
  status: 'DENIED';
  reason: DenyReason;
  detail: string;
}

/** What a source makes of one call. */
export type Prepared =
  | {
      kind: 'submit';
      request: SubmitRequest;
      /** How long the plain call waits before answering PENDING (rule 7). */
      waitSeconds: number;
      /** The refusal text when the broker says the request_id was used for another request (3.1). */
      requestIdReused?: string;
    }
  /** A tool-level error (contract 3.2): nothing queued, the owner sees nothing. */
  | { kind: 'refuse'; code: ToolErrorCode; message: string }
  /** Answered at once and recorded in the audit log, nothing queued (contract 3.3). */
  | { kind: 'answer'; result: ImmediateAnswer; audit?: AuditEntry };

/**
 * A source's part of `list_commands` (contract 3.1): fields of its answer, their output schema, and a
 * phrase of the one-line summary. The edge merges the parts in source order.
 */
export interface SourceListing {
  fields: Record<string, unknown>;
  summary?: string;
}

export interface ListingSchema {
  properties: Record<string, unknown>;
  required: string[];
}

export interface Source {
  /** The `tool` of every command it queues; the broker runs those with `executor`. */
  readonly kind: Command['tool'];
  /** Runs its approved commands; undefined when the feature is off (nothing can be queued then). */
  readonly executor: Executor | undefined;
  /** Its tools as `tools/list` publishes them, `execution.taskSupport` included (contract 10). */
  tools(): readonly Tool[];
  /** Validates a call of one of its tools (in the product, contract 3.2) and builds the request. */
  prepare(name: string, args: Record<string, unknown>, client: string): Prepared;
  /** A reload's config (contract 17): what it reads from the config applies to requests from now on. */
  reload?(config: Config): void;
  /** Calls `listener` after its tool set may have changed; returns the function that stops it. */
  onChange?(listener: () => void): () => void;
  /** Its fields of `list_commands` (contract 3.1); `listingSchema` describes them. */
  listing?(): SourceListing;
  readonly listingSchema?: ListingSchema;
  /**
   * The answer its own call (or task) gives once the command settled, when it differs from contract 3.2's
   * result (contract 7: an upstream's SUCCEEDED result unchanged); undefined for the result of 3.2.
   */
  answer?(command: Command): CallToolResult | undefined;
}

/** The broker's executors by tool kind, from the sources that have one. */
export function executorsOf(sources: readonly Source[]): Partial<Record<Command['tool'], Executor>> {
  const executors: Partial<Record<Command['tool'], Executor>> = {};
  for (const s of sources) if (s.executor !== undefined) executors[s.kind] = s.executor;
  return executors;
}
