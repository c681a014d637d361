/**
 * The 10-minute checkpoint (contract 14): the store signs one with every 1,000th entry by itself; this timer
 * signs one every 10 minutes when entries exist past the last, and one at a clean shutdown. Who hears of
 * them subscribes to the store's `audits.onCheckpoint` (the `checkpoint` notification, contract 13.1).
 */
import { type Clock, iso, type Logger, systemClock } from '../base/index.js';
import type { AuditStore } from '../core/index.js';

/** Contract 14: every 10 minutes when new entries exist. */
export const CHECKPOINT_INTERVAL_MS = 10 * 60 * 1000;

const INTERVAL_ENV = 'OGF_BROKER_AUDIT_CHECKPOINT_MS';

/**
 * The checkpoint interval: 10 minutes, or `OGF_BROKER_AUDIT_CHECKPOINT_MS` (1000..600000) — it can only
 * sign more often, never less; for owners who want the signed tip off the machine sooner, and for tests
 * that watch a checkpoint notification without waiting ten minutes.
 */
export function checkpointIntervalMs(env: NodeJS.ProcessEnv, log: Logger): number {
  const raw = env[INTERVAL_ENV];
  if (raw === undefined || raw === '') return CHECKPOINT_INTERVAL_MS;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1000 && n <= CHECKPOINT_INTERVAL_MS) return n;
  log.log('warn', 'audit_checkpoint_interval_ignored', {
    reason: `${INTERVAL_ENV} must be an integer from 1000 to ${CHECKPOINT_INTERVAL_MS}`,
  });
  return CHECKPOINT_INTERVAL_MS;
}

export class CheckpointTimer {
  readonly #audits: AuditStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(deps: { audits: AuditStore; log: Logger; clock?: Clock; intervalMs?: number }) {
    this.#audits = deps.audits;
    this.#clock = deps.clock ?? systemClock;
    this.#log = deps.log;
    this.#timer = setInterval(() => void this.tick(), deps.intervalMs ?? CHECKPOINT_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Signs a checkpoint now if there is anything new; a failure is logged, never thrown. */
  async tick(): Promise<void> {
    if (this.#closed) return;
    try {
      const cp = await this.#audits.checkpoint(iso(this.#clock.now()));
      if (cp !== undefined) this.#log.log('info', 'audit_checkpoint', { seq: cp.seq });
    } catch (e) {
      this.#log.log('error', 'audit_checkpoint_failed', { error: (e as Error)?.message ?? String(e) });
    }
  }

  /** Stops the timer after one last checkpoint (the store must still be open). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.tick();
    this.stop();
  }

  /** Stops the timer without a last checkpoint (a start that failed). Idempotent. */
  stop(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }
}
