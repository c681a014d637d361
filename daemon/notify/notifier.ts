/**
 * The notifier (contract 13.1): hears every committed change of the broker (BrokerApi.subscribe), turns the
 * ones a channel asked for into messages, and hands them to the delivery queue. The broker calls its
 * listener synchronously after a commit, so the listener only decides and queues — O(1), never awaiting,
 * never throwing — and builds each message when its turn to be sent comes. Delivery never delays or changes
 * a command: nothing here is awaited by the broker, and nothing here writes command state.
 *
 * ```
 *  broker commit ─▶ listener: awaits review? ─▶ waiting.ts: once, with its preview ─▶ digest: first 5 of 10 s ─▶ each channel ─▶ queue
 *                                 │                                       └ 6th+ ─▶ one digest at the window's end ─┘
 *                                 └ decided / failed ─▶ channels that asked for it ─▶ queue
 *  publish(checkpoint) (the audit record, section 14) ─▶ channels that asked for it ─▶ queue
 * ```
 *
 * Web Push (contract 13.2) is one more recipient of `waiting` messages and digests (push.ts).
 */
import { type Clock, iso, type Logger, systemClock } from '../base/index.js';
import type { NotifyChannelConfig, NotifyEventName } from '../config/index.js';
import type { BrokerApi, Command, KindPolicies } from '../core/index.js';
import type { Attempt } from './attempt.js';
import { type Channel, channelOf } from './channels.js';
import { Digest, type Held } from './digest.js';
import {
  commandMessage,
  digestMessage,
  eventOf,
  type Message,
  type PublishedEvent,
  publishedMessage,
} from './message.js';
import { DeliveryQueue, type Job } from './queue.js';
import { type ChannelStatus, writeNotifyStatus } from './status.js';
import { WaitingNotices } from './waiting.js';

/** More recipients of `waiting` messages than the configured channels: the owners' push subscriptions. */
export interface ExtraRecipients {
  /** One job per recipient for a message built lazily (`build`), each reporting to `done`. */
  jobs(event: string, build: () => Message): Job[];
}

export interface NotifierOptions {
  channels: readonly NotifyChannelConfig[];
  kinds: KindPolicies;
  /** `public_url`, or the daemon's own URL: where links point. */
  baseUrl: () => string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  clock?: Clock;
  /** `<data-dir>/notify.json`; absent: no status file. */
  statusPath?: string;
  pid?: number;
  push?: ExtraRecipients;
  /** Whether a preview will be made for a command (contract 12): its waiting message waits for it (≤ 2 s). */
  awaitsPreview?: (c: Command) => boolean;
}

/** How often notify.json may be rewritten. */
const STATUS_COALESCE_MS = 250;

export class Notifier {
  readonly #o: NotifierOptions;
  readonly #clock: Clock;
  #channels: Channel[];
  readonly #queue: DeliveryQueue;
  readonly #digest: Digest;
  readonly #waiting: WaitingNotices;
  readonly #status = new Map<string, ChannelStatus>();
  #statusTimer: { cancel(): void } | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(o: NotifierOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#channels = o.channels.map((c) => channelOf(c, o.env));
    for (const c of this.#channels) this.#status.set(c.id, { id: c.id, kind: c.kind });
    this.#queue = new DeliveryQueue({ clock: this.#clock, log: o.log });
    this.#digest = new Digest(this.#clock, (held) => this.#sendDigest(held));
    this.#waiting = new WaitingNotices(this.#clock, o.awaitsPreview ?? (() => false), (c) =>
      this.#tellWaiting(c),
    );
  }

  /** Whether anything would ever be sent (no channel and no push: the daemon need not subscribe). */
  get active(): boolean {
    return this.#channels.length > 0 || this.#o.push !== undefined;
  }

  /**
   * A reload's channels (contract 17): messages from now on go to these. A channel kept under the same id
   * keeps its delivery status; what was queued for a removed one is still delivered. Which commands were
   * already told as waiting is kept, so a reload never repeats a `waiting` message.
   */
  setChannels(configs: readonly NotifyChannelConfig[]): void {
    const channels = configs.map((c) => channelOf(c, this.#o.env));
    const ids = new Set(channels.map((c) => c.id));
    for (const id of [...this.#status.keys()]) if (id !== 'push' && !ids.has(id)) this.#status.delete(id);
    for (const c of channels) if (!this.#status.has(c.id)) this.#status.set(c.id, { id: c.id, kind: c.kind });
    this.#channels = channels;
    this.#writeStatus();
  }

  /** Starts hearing the broker's committed changes. */
  start(broker: Pick<BrokerApi, 'subscribe'>, own: (c: Command) => boolean = () => true): void {
    if (this.#unsubscribe !== undefined) throw new Error('Notifier.start() called twice');
    // Contract 16: each node notifies of its own commands (every device still hears every node's, once).
    this.#unsubscribe = broker.subscribe((c) => {
      if (own(c)) this.command(c);
    });
    this.#writeStatus();
  }

  /** One committed change (the broker's listener): queues what it means to each channel. */
  command(c: Command): void {
    if (this.#closed) return;
    if (c.phase.state === 'awaiting_review') {
      this.#waiting.waiting(c);
      return;
    }
    this.#waiting.left(c.id);
    const event = eventOf(c);
    if (event === undefined || event === 'waiting') return;
    const base = this.#o.baseUrl;
    for (const ch of this.#channels) {
      if (!ch.events.has(event)) continue;
      this.#push(ch, event, () => commandMessage(event, c, ch.includeArgs, this.#o.kinds, base()));
    }
  }

  /** The one `waiting` message of a start of waiting (waiting.ts), unless the window's digest covers it. */
  #tellWaiting(c: Command): void {
    if (!this.#digest.admit(c.client, c.id)) return;
    const base = this.#o.baseUrl;
    for (const ch of this.#channels) {
      if (!ch.events.has('waiting')) continue;
      this.#push(ch, 'waiting', () => commandMessage('waiting', c, ch.includeArgs, this.#o.kinds, base()));
    }
    // The push payload follows the same redaction rules: never an argument (contract 13.2).
    this.#pushAll('waiting', () => commandMessage('waiting', c, false, this.#o.kinds, base()));
  }

  /**
   * The seam for events other parts of the daemon raise (contract 13.1 `checkpoint`: the audit record's
   * checkpoints, section 14): sent to every channel whose `events` name it.
   */
  publish(e: PublishedEvent): void {
    if (this.#closed) return;
    for (const ch of this.#channels)
      if (ch.events.has(e.event)) this.#push(ch, e.event, () => publishedMessage(e, this.#o.baseUrl()));
  }

  #sendDigest(held: Readonly<Held>): void {
    if (this.#closed) return;
    const build = () => digestMessage(held, this.#o.baseUrl());
    for (const ch of this.#channels) if (ch.events.has('waiting')) this.#push(ch, 'digest', build);
    this.#pushAll('digest', build);
  }

  /** Every owner's devices (Web Push), recorded in the status as the channel `push`. */
  #pushAll(event: string, build: () => Message): void {
    for (const job of this.#o.push?.jobs(event, build) ?? []) {
      if (!this.#status.has('push')) this.#status.set('push', { id: 'push', kind: 'web push' });
      this.#queue.push({
        ...job,
        done: (a) => {
          job.done?.(a);
          this.#record('push', a);
        },
      });
    }
  }

  #push(ch: Channel, event: NotifyEventName | 'digest', build: () => Message): void {
    this.#queue.push({
      channel: ch.id,
      event,
      send: (signal) => ch.send(build(), signal),
      done: (a) => this.#record(ch.id, a),
    });
  }

  #record(id: string, a: Attempt): void {
    const s = this.#status.get(id);
    if (s === undefined) return;
    const at = iso(this.#clock.now());
    if (a.ok) s.last_success = at;
    else
      s.last_failure = {
        at,
        ...(a.status === undefined ? {} : { status: a.status }),
        ...(a.error === undefined ? {} : { error: a.error }),
      };
    this.#statusTimer ??= this.#clock.setTimeout(() => {
      this.#statusTimer = undefined;
      this.#writeStatus();
    }, STATUS_COALESCE_MS);
  }

  #writeStatus(): void {
    const path = this.#o.statusPath;
    if (path === undefined || this.#status.size === 0) return;
    try {
      writeNotifyStatus(path, this.#o.pid ?? process.pid, [...this.#status.values()]);
    } catch (e) {
      this.#o.log.log('error', 'notify_status_not_written', { error: (e as Error).message });
    }
  }

  /** Each channel's last success and failure. */
  status(): ChannelStatus[] {
    return [...this.#status.values()].map((s) => ({ ...s }));
  }

  /** Resolves when nothing waits to be sent (tests). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /** Stops hearing the broker and drops what waits; writes the status one last time. Twice is harmless. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe?.();
    this.#waiting.close();
    this.#digest.close();
    this.#queue.close();
    this.#statusTimer?.cancel();
    this.#writeStatus();
  }
}
