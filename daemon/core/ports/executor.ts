/**
 * How an approved command runs, kept out of the broker (architecture.md): an executor takes an approved
 * command and reports exactly one outcome. Each kind has its own (`kinds/<kind>/executor.ts`): a catalog
 * process, a cue through the bridge client, a forwarded upstream MCP tool call.
 */

import type { FailReason } from '../../base/index.js';
import type { Command, FinishResult, Preview, StartFields } from '../model/index.js';

export interface ExecutionIo {
  /** The secret the edge handed to `submit` (cues: the session UUID), from memory only. */
  secret: unknown;
  /**
   * Commits `running` durably (rule 3). Call it exactly once, immediately before spawning, and await it:
   * it resolves once `running` is committed, and after that the executor must report a FinishResult.
   * Resolves false when the broker is closing or the commit failed, and the executor must not spawn
   * (then report an `aborted` result). Contract 20: `bound` is what the preview made again at launch sets
   * with `running` (the preview it approves, the file's previous content) and records in its audit entry.
   */
  markRunning(bound?: Bound): Promise<boolean>;
  /**
   * Contract 20: work the executor does before `markRunning` (the launch-time preview). The approval's
   * commit waits for it, briefly, so `running` joins that one transaction (group-commit.ts `hold`).
   */
  beforeRunning?(work: PromiseLike<unknown>): void;
}

/** Contract 20: the preview made again just before launch, when it matched (or nothing bound it). */
export interface Bound {
  fields: StartFields;
  /** The launch entry's record of it: the approved and the current hashes. */
  detail: Record<string, unknown>;
}

/**
 * Contract 20: the preview made again just before launch differs from the one the owners approved. Nothing
 * was sent; the command awaits review again with `preview`, its approvals spent; `detail` (both hashes) is
 * audited.
 */
export interface Rebound {
  kind: 'rebound';
  preview: Preview;
  detail: Record<string, unknown>;
}

/** An outcome reported before `markRunning`: nothing was spawned, the effect certainly did not happen. */
export interface Aborted {
  kind: 'aborted';
  reason: FailReason;
  detail: string;
}

export type ExecutionReport = FinishResult | Aborted | Rebound;

export interface Executor {
  /** Runs one approved command. Never rejects: every failure is a report. */
  execute(command: Command, io: ExecutionIo): Promise<ExecutionReport>;
  /**
   * The longest a launch of this command can live after its spawn (its hard deadline). A daemon that
   * died leaves its children running as orphans; for commands with a per-session order (rule 6) the
   * next daemon holds that session's launches until this much time after the orphan's `started_at`.
   */
  maxRunMs?(command: Command): number;
}
