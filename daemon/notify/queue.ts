/**
 * The delivery queue (contract 13.1): every message is sent in the background; at most 16 are in flight at
 * once and more wait, oldest first; past 1,000 waiting the oldest are dropped (logged, one line per second
 * at most, so a flood does not flood the log too). An attempt that meets a network error or a 5xx answer is
 * tried again after 1 s and after 5 s, then given up and logged `notify_failed` (channel id, HTTP status or
 * error code — never a URL or a header value). Nothing here is awaited by the broker: a channel that hangs,
 * answers slowly or fails forever holds a slot for at most one attempt's 5 s, and changes no command.
 *
 * ```
 *  push ─▶ waiting (≤ 1000, oldest dropped) ─▶ in flight (≤ 16) ─▶ 2xx ─▶ done (success)
 *                     ▲                              │ network error / 5xx, tries < 3
 *                     └──── after 1 s, then 5 s ◀────┤
 *                                                    └ otherwise ─▶ notify_failed
 * ```
 */
import type { Clock, Logger } from '../base/index.js';
import type { Attempt } from './attempt.js';

export const MAX_IN_FLIGHT = 16;
export const MAX_WAITING = 1000;
/** Waits before the second and third attempts (contract 13.1). */
export const RETRY_DELAYS_MS = [1000, 5000] as const;

/** One message to one channel. */
export interface Job {
  channel: string;
  /** What the message is about (`waiting`, `digest`, …), for the log. */
  event: string;
  send(signal: AbortSignal): Promise<Attempt>;
  /** Told once, with the last attempt's outcome (delivered, given up or dropped). */
  done?(a: Attempt): void;
}

interface Entry {
  job: Job;
  tries: number;
}

export interface QueueOptions {
  clock: Clock;
  log: Logger;
  maxInFlight?: number;
  maxWaiting?: number;
}

export class DeliveryQueue {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #maxInFlight: number;
  readonly #maxWaiting: number;
  readonly #waiting: Entry[] = [];
  readonly #abort = new AbortController();
  readonly #retries = new Set<{ cancel(): void }>();
  #inFlight = 0;
  #dropped = 0;
  #dropLog: { cancel(): void } | undefined;
  #closed = false;
  #idle: Array<() => void> = [];

  constructor(o: QueueOptions) {
    this.#clock = o.clock;
    this.#log = o.log;
    this.#maxInFlight = o.maxInFlight ?? MAX_IN_FLIGHT;
    this.#maxWaiting = o.maxWaiting ?? MAX_WAITING;
  }

  /** Messages sending now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Messages waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Queues a message; never blocks, never throws. */
  push(job: Job): void {
    if (this.#closed) return;
    this.#enqueue({ job, tries: 0 });
  }

  #enqueue(e: Entry): void {
    this.#waiting.push(e);
    while (this.#waiting.length > this.#maxWaiting) {
      const old = this.#waiting.shift()!;
      old.job.done?.({ ok: false, retry: false, error: 'dropped' });
      this.#noteDrop();
    }
    this.#pump();
  }

  #noteDrop(): void {
    this.#dropped++;
    this.#dropLog ??= this.#clock.setTimeout(() => {
      this.#dropLog = undefined;
      this.#log.log('warn', 'notify_dropped', {
        count: this.#dropped,
        reason: `more than ${this.#maxWaiting} messages waiting`,
      });
      this.#dropped = 0;
    }, 1000);
  }

  #pump(): void {
    while (!this.#closed && this.#inFlight < this.#maxInFlight && this.#waiting.length > 0) {
      const e = this.#waiting.shift()!;
      this.#inFlight++;
      e.tries++;
      e.job
        .send(this.#abort.signal)
        .catch(
          (err: unknown) => ({ ok: false, retry: true, error: (err as Error)?.name ?? 'error' }) as Attempt,
        )
        .then((a) => this.#settled(e, a));
    }
    if (this.#inFlight === 0 && this.#waiting.length === 0 && this.#retries.size === 0) {
      for (const r of this.#idle.splice(0)) r();
    }
  }

  #settled(e: Entry, a: Attempt): void {
    this.#inFlight--;
    if (this.#closed) return;
    const delay = RETRY_DELAYS_MS[e.tries - 1];
    if (!a.ok && a.retry && delay !== undefined) {
      const timer = this.#clock.setTimeout(() => {
        this.#retries.delete(timer);
        if (!this.#closed) this.#enqueue(e);
      }, delay);
      this.#retries.add(timer);
    } else {
      if (!a.ok && a.error !== 'dropped') {
        this.#log.log('warn', 'notify_failed', {
          channel: e.job.channel,
          about: e.job.event,
          attempts: e.tries,
          ...(a.status === undefined ? {} : { status: a.status }),
          ...(a.error === undefined ? {} : { error: a.error }),
        });
      }
      e.job.done?.(a);
    }
    this.#pump();
  }

  /** Resolves when nothing is waiting, sending or due for a retry (tests, `notify test`). */
  idle(): Promise<void> {
    if (this.#inFlight === 0 && this.#waiting.length === 0 && this.#retries.size === 0)
      return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  /** Stops: aborts what is in flight and drops what waits. Twice is harmless. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort();
    for (const t of this.#retries) t.cancel();
    this.#retries.clear();
    this.#dropLog?.cancel();
    this.#waiting.length = 0;
    for (const r of this.#idle.splice(0)) r();
  }
}
