/**
 * When the retention rule (retention-rule.ts) is applied: a pass over the commands in creation order, at start
 * and then every hour, in bounded batches off the hot path (issue 19 finding 3). A batch reads at most
 * BATCH_ROWS rows' columns without their records, skips a row too small to hold a prunable field unread,
 * and prunes at most about BATCH_CHARS of records before it yields the event loop (the prunes commit with
 * the broker's other changes, one group commit per batch).
 *
 * The pass stops at the first row created less than RETENTION_MS ago: no row after it can have been final
 * that long (a command ends after it is created, and rows are numbered in creation order). It remembers how
 * far it got, and comes back for any older row that was not final yet.
 */
import type { Clock, Logger } from '../../base/index.js';
import { FIELD_KEEP_BYTES, RETENTION_MS } from '../model/index.js';
import type { Awaitable, RetentionRow } from '../ports/index.js';

/** Rows one batch reads (columns only: seq, id, state, created_at, the record's length). */
export const BATCH_ROWS = 500;
/** Characters of records one batch may parse and rewrite. */
export const BATCH_CHARS = 8 * 1024 * 1024;
/** Time between passes. */
export const PASS_INTERVAL_MS = 3600_000;

const FINAL = new Set(['succeeded', 'denied', 'failed', 'unknown']);

export interface RetentionDeps {
  scan(afterSeq: number, limit: number): Awaitable<RetentionRow[]>;
  prune(id: string): Promise<{ ok: boolean }>;
  clock: Clock;
  log: Logger;
  /** Between batches (default: setImmediate, so owners and clients are served in between). */
  yieldTurn?: () => Promise<void>;
}

export class RetentionPass {
  readonly #deps: RetentionDeps;
  readonly #yield: () => Promise<void>;
  /** Every row up to this seq is done: pruned, too small, or not yet looked at because younger. */
  #cursor = 0;
  #timer: { cancel(): void } | undefined;
  #running: Promise<number> | undefined;
  #closed = false;

  constructor(deps: RetentionDeps) {
    this.#deps = deps;
    this.#yield = deps.yieldTurn ?? (() => new Promise((r) => setImmediate(r)));
  }

  /** The first pass now (in the next turn), then one every PASS_INTERVAL_MS. */
  start(): void {
    this.#schedule(0);
  }

  /** No further pass; a batch in progress ends at its next yield. */
  close(): void {
    this.#closed = true;
    this.#timer?.cancel();
  }

  /** Runs one whole pass (or joins the one running); resolves to how many commands it pruned. */
  pass(): Promise<number> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    this.#timer = this.#deps.clock.setTimeout(() => {
      this.pass()
        .catch((e: unknown) =>
          this.#deps.log.log('error', 'retention_failed', { error: (e as Error)?.message ?? String(e) }),
        )
        .finally(() => this.#schedule(PASS_INTERVAL_MS));
    }, ms);
  }

  async #pass(): Promise<number> {
    const horizon = this.#deps.clock.now() - RETENTION_MS;
    let pruned = 0;
    /** The oldest row passed over because it was not final yet: the next pass starts there. */
    let waiting: number | undefined;
    let after = this.#cursor;
    for (;;) {
      if (this.#closed) return pruned;
      const rows = await this.#deps.scan(after, BATCH_ROWS);
      const prunes: Array<Promise<{ ok: boolean }>> = [];
      let chars = 0;
      let reachedYoung = false;
      for (const row of rows) {
        if (Date.parse(row.created_at) > horizon) {
          reachedYoung = true;
          break;
        }
        if (!FINAL.has(row.state)) waiting ??= row.seq;
        // Contract 20: a succeeded command may keep a file's previous content, however small: read it once.
        else if (row.chars > FIELD_KEEP_BYTES || row.state === 'succeeded') {
          if (prunes.length > 0 && chars + row.chars > BATCH_CHARS) break;
          chars += row.chars;
          prunes.push(this.#deps.prune(row.id));
        }
        after = row.seq;
      }
      for (const r of await Promise.all(prunes)) if (r.ok) pruned++;
      this.#cursor = waiting === undefined ? after : waiting - 1;
      if (reachedYoung || rows.length === 0) break;
      await this.#yield();
    }
    if (pruned > 0) this.#deps.log.log('info', 'retention_pruned', { commands: pruned });
    return pruned;
  }
}
