/**
 * The launch/outcome path of the broker (architecture.md, "the house"): an approved command goes through
 * its session's FIFO (rule 6), `running` is committed before its executor may spawn or send (rule 3), and
 * the one outcome the executor reports is committed — retried while the store refuses the write, so a known
 * outcome is never lost. The broker stays the only writer: every change goes through `host.apply`.
 *
 * The broker schedules a launch as soon as the approval is queued, not after its commit: with a free lane
 * the executor's `markRunning` lands in the approval's own batch (one transaction for both), and still
 * resolves only once that batch is durable. If the batch fails, the command is back to `awaiting_review`
 * in memory, `markRunning` resolves false, and no outcome is recorded (the abort applies to `approved` only).
 *
 * ```
 *  approved ──schedule──▶ lane (per session) ──▶ executor.execute ──markRunning──▶ running ──report──▶ final
 *                                                      └── aborted before markRunning ──▶ failed (never ran)
 * ```
 */

import type { Logger } from '../../base/index.js';
import { type Clock, iso } from '../../base/index.js';
import type { Command, Event } from '../model/index.js';
import { isStaleWrite } from '../model/index.js';
import type { Bound, ExecutionReport, Executor, Faults } from '../ports/index.js';
import { SessionLanes } from './session-lanes.js';

/** How often an outcome the store refused (disk full, read-only) is committed again. */
const COMMIT_RETRY_MS = 1000;
/** How often `running` is tried again when its batch lost a race between nodes (stale-write.ts). */
const STALE_RETRIES = 8;

/** What the launch path needs from the broker that owns it. */
export interface LaunchHost {
  /**
   * The non-final command with this id in the broker's working view: an approval of this turn is seen
   * before its commit, so its `running` can join the approval's batch (issue 19 finding 6).
   */
  active(id: string): Command | undefined;
  /**
   * Applies one daemon event (transition, then the group commit, then notify); resolves after the commit,
   * false when the transition refused it. Rejects when the store refused the batch.
   */
  apply(c: Command, event: Event): Promise<boolean>;
  /** The session secret `submit` was handed (memory only, rule 4). */
  secret(id: string): unknown;
  /** True once the broker is closing: nothing new is spawned. */
  closing(): boolean;
  /** The pending batch (the approval's) waits briefly for `work` before it commits (group-commit.ts). */
  hold?(work: PromiseLike<unknown>): void;
}

export interface LaunchDeps {
  host: LaunchHost;
  /** Executors by tool. A tool without one fails with LaunchFailed. */
  executors: Partial<Record<Command['tool'], Executor>>;
  /** Rule 6: the FIFO lane a command's launches take (its kind says: core/model/kind-policy.ts), if any. */
  laneKey: (command: Command) => string | undefined;
  clock: Clock;
  log: Logger;
  /** Test-only crash points (fault-points.ts); `noFaults` everywhere but a daemon under a fault test. */
  faults: Faults;
  /** Contract 20: a command back from a changed file waits this long again for the owners. */
  reviewMs: number;
}

export class Launches {
  readonly #host: LaunchHost;
  readonly #executors: LaunchDeps['executors'];
  readonly #laneKey: LaunchDeps['laneKey'];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #faults: Faults;
  readonly #reviewMs: number;
  /** Per-session FIFO (rule 6): approved ids waiting for their session's current launch to end. */
  readonly #lanes = new SessionLanes((id, done) => this.#launch(id, done));
  readonly #inFlight = new Set<Promise<void>>();
  readonly #holds = new Map<string, { cancel(): void }>();

  constructor(deps: LaunchDeps) {
    this.#host = deps.host;
    this.#executors = deps.executors;
    this.#laneKey = deps.laneKey;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#faults = deps.faults;
    this.#reviewMs = deps.reviewMs;
  }

  /** Number of launches in flight. */
  get running(): number {
    return this.#inFlight.size;
  }

  /**
   * Launches an approved command now, or after its session's earlier launches (rule 6). Issue 19 finding 6:
   * the broker calls this at once, after the approval's change is queued. When the lane is free and the
   * executor reaches `markRunning` within the turn (a catalog command, a connected upstream, a cue once its
   * session file is written), `running` joins the approval's batch: one transaction, one fsync, approved at
   * version N and running at N+1, announced in that order. Rule 3 holds because `markRunning` still
   * resolves only after that commit; if the batch fails, both roll back and `markRunning` says false
   * (nothing launched, the command awaits review again). A busy lane or a slower executor commits `running`
   * in a later batch.
   */
  schedule(c: Command): void {
    const lane = this.#laneKey(c);
    if (lane === undefined) this.#launch(c.id);
    else this.#lanes.enqueue(lane, c.id);
  }

  /**
   * Rule 6 across a crash: a cue that was running when the daemon died may still be delivering (its
   * client is an orphan in its own process group). Hold its session's launches until the time the dead
   * daemon would have killed that client, so a cue approved now cannot overlap it.
   */
  holdForOrphans(commands: readonly Command[]): void {
    const until = new Map<string, number>();
    for (const c of commands) {
      const p = c.phase;
      const maxRun = this.#executors[c.tool]?.maxRunMs?.(c);
      const lane = this.#laneKey(c);
      if (lane === undefined || maxRun === undefined || p.state !== 'unknown') continue;
      if (p.reason !== 'DaemonRestarted' || p.started_at === undefined) continue;
      const end = Date.parse(p.started_at) + maxRun;
      if (end > (until.get(lane) ?? 0)) until.set(lane, end);
    }
    for (const [key, end] of until) {
      const ms = end - this.#clock.now();
      if (ms <= 0 || !this.#lanes.hold(key)) continue;
      const timer = this.#clock.setTimeout(() => {
        this.#holds.delete(key);
        if (!this.#host.closing()) this.#lanes.release(key);
      }, ms);
      this.#holds.set(key, timer);
    }
  }

  /** Cancels the orphan holds and lets launches in flight finish for up to `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    for (const t of this.#holds.values()) t.cancel();
    this.#holds.clear();
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#inFlight]),
      new Promise((r) => {
        timer = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  #launch(id: string, after?: () => void): void {
    const run = this.#execute(id)
      .catch((e: unknown) => {
        // Outcome commits retry (#commitOutcome); anything else that throws leaves the store as it was,
        // and the next start tells the truth from it (rules 3 and 4).
        this.#log.log('error', 'commit_failed', { id, error: (e as Error).message });
      })
      .finally(() => {
        this.#inFlight.delete(run);
        after?.();
      });
    this.#inFlight.add(run);
  }

  async #execute(id: string): Promise<void> {
    const host = this.#host;
    const c = host.active(id);
    if (c?.phase.state !== 'approved') return;
    const executor = this.#executors[c.tool];
    let report: ExecutionReport;
    if (host.closing()) return; // Rule 4: an approved command that never ran launches after the restart.
    if (!executor) {
      report = {
        kind: 'aborted',
        reason: 'LaunchFailed',
        detail: `No executor is configured for ${c.command}.`,
      };
    } else {
      let commitError: string | undefined;
      const markRunning = async (bound?: Bound): Promise<boolean> => {
        for (let attempt = 1; ; attempt++) {
          if (host.closing()) return false;
          const cur = host.active(id);
          if (!cur) return false;
          try {
            this.#faults('before_mark_running');
            // Rule 3: resolved only once `running` is committed; the executor spawns or sends after that.
            const at = iso(this.#clock.now());
            const ok = await host.apply(
              cur,
              bound === undefined
                ? { type: 'start', at }
                : { type: 'start', at, fields: bound.fields, detail: bound.detail },
            );
            if (ok) this.#faults('after_mark_running');
            return ok;
          } catch (e) {
            // Contract 16: the batch lost a race on another row (another node's change): nothing of it
            // was stored, so `running` is tried again on the command as it now is (approved still, or not).
            if (isStaleWrite(e) && attempt < STALE_RETRIES) continue;
            // Rule 3: if `running` cannot be made durable, nothing is spawned.
            commitError = (e as Error).message;
            this.#log.log('error', 'commit_failed', { id, error: commitError });
            return false;
          }
        }
      };
      try {
        report = await executor.execute(c, {
          secret: host.secret(id),
          markRunning,
          ...(host.hold === undefined ? {} : { beforeRunning: (work) => host.hold?.(work) }),
        });
      } catch (e) {
        report = {
          kind: 'aborted',
          reason: 'LaunchFailed',
          detail: `The launch failed: ${(e as Error).message}.`,
        };
      }
      if (report.kind === 'aborted' && commitError !== undefined) {
        // The executor only saw `false`; say what really stopped the launch.
        report = {
          kind: 'aborted',
          reason: 'LaunchFailed',
          detail: `The daemon could not record the launch in its database (${commitError}), so nothing was launched.`,
        };
      }
    }
    await this.#settle(id, report);
  }

  /** Commits what the executor reported: back to the owners (contract 20), never ran, or its outcome. */
  async #settle(id: string, report: ExecutionReport): Promise<void> {
    const host = this.#host;
    const at = iso(this.#clock.now());
    if (report.kind === 'rebound') {
      // Contract 20: nothing was sent; back to the owners with the new preview, the approvals spent.
      const review_expires_at = iso(this.#clock.now() + this.#reviewMs);
      await this.#commitOutcome(id, (cur) =>
        cur.phase.state === 'approved' && !host.closing()
          ? { type: 'rebind', at, preview: report.preview, review_expires_at, detail: report.detail }
          : undefined,
      );
      return;
    }
    if (report.kind === 'aborted') {
      // A shutdown abort leaves the command approved: it never ran, so it launches after the restart.
      await this.#commitOutcome(id, (cur) =>
        cur.phase.state === 'approved' && !host.closing()
          ? { type: 'abort', at, reason: report.reason, detail: report.detail }
          : undefined,
      );
      return;
    }
    this.#faults('before_finish_commit');
    await this.#commitOutcome(id, () => ({ type: 'finish', at, result: report }));
  }

  /**
   * Commits a launch's outcome, retrying while the store refuses the write (disk full, read-only): the
   * outcome is known and must not be lost, nor the command left `approved`/`running` for the rest of the
   * daemon's life once space returns. If the daemon stops first, the next start tells the truth from the
   * file (rule 3: running → unknown/DaemonRestarted; rule 4: approved, never ran → launched).
   */
  async #commitOutcome(id: string, eventFor: (cur: Command) => Event | undefined): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const cur = this.#host.active(id);
      const event = cur && eventFor(cur);
      if (!cur || !event) return;
      try {
        await this.#host.apply(cur, event);
        return;
      } catch (e) {
        this.#log.log('error', 'commit_failed', { id, attempt, error: (e as Error).message });
        if (this.#host.closing()) return;
        await new Promise<void>((r) => this.#clock.setTimeout(r, COMMIT_RETRY_MS));
      }
    }
  }
}
