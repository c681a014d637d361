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
  /**
   * One job per recipient for a message built lazily (`build`), each reporting to `done`; `withActions`
   * (contract 19) adds the Approve and Deny of the recipient's owner to its copy.
   */
  jobs(event: string, build: () => Message, withActions?: WithActions): Job[];
}

/** A message with the one-time actions of `owner` on `channel` added (or as it was, when none apply). */
export type WithActions = (m: Message, owner: string, channel: string) => Promise<Message>;

/** Contract 19 (v4): mints a command's Approve and Deny for one owner and channel (daemon/actions/desk.ts). */
export interface ActionMinter {
  mint(c: Command, owner: string, channel: string): Promise<{ approve: string; deny: string } | undefined>;
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
  /** Contract 19 (v4): the actions' minter; absent, no message carries actions. */
  actions?: ActionMinter;
  /** Contract 19 (v4): the owners' Web Push devices get actions (config `push.actions`). */
  pushActions?: boolean;
}

/** A configured channel's status entry: its id, kind and (contract 19) whom it decides as. */
function statusOf(c: Channel, was?: ChannelStatus): ChannelStatus {
  const s: ChannelStatus = { ...was, id: c.id, kind: c.kind };
  if (c.actionsAs === undefined) delete s.decides_as;
  else s.decides_as = c.actionsAs;
  return s;
}

/** The owners' devices (`push`): each decides as its own owner when `push.actions` is on. */
function pushStatus(s: ChannelStatus, actions: boolean): ChannelStatus {
  const { decides_as: _, ...rest } = s;
  return actions ? { ...rest, decides_as: "each device's owner" } : rest;
}

/** How often notify.json may be rewritten. */
const STATUS_COALESCE_MS = 250;

export class Notifier {
  readonly #o: NotifierOptions;
  readonly #clock: Clock;
  #channels: Channel[];
  #pushActions: boolean;
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
    this.#pushActions = o.pushActions === true;
    for (const c of this.#channels) this.#status.set(c.id, statusOf(c));
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
  setChannels(configs: readonly NotifyChannelConfig[], pushActions = this.#pushActions): void {
    this.#pushActions = pushActions;
    const channels = configs.map((c) => channelOf(c, this.#o.env));
    const ids = new Set(channels.map((c) => c.id));
    for (const id of [...this.#status.keys()]) if (id !== 'push' && !ids.has(id)) this.#status.delete(id);
    for (const c of channels) this.#status.set(c.id, statusOf(c, this.#status.get(c.id)));
    const push = this.#status.get('push');
    if (push !== undefined) this.#status.set('push', pushStatus(push, pushActions));
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
    const withActions = this.#withActions(c);
    for (const ch of this.#channels) {
      if (!ch.events.has('waiting')) continue;
      const build = () => commandMessage('waiting', c, ch.includeArgs, this.#o.kinds, base());
      const as = ch.actionsAs;
      this.#push(ch, 'waiting', as === undefined ? build : () => withActions(build(), as, ch.id));
    }
    // The push payload follows the same redaction rules: never an argument (contract 13.2).
    const build = () => commandMessage('waiting', c, false, this.#o.kinds, base());
    this.#pushAll('waiting', build, this.#pushActions ? withActions : undefined);
  }

  /**
   * Contract 19 (v4): adds a command's Approve and Deny to a message, minted when the message is first
   * built for sending (a retry sends the same ones). A minter that fails leaves the message without
   * actions: the owner still hears of the command, and decides in the panel.
   */
  #withActions(c: Command): WithActions {
    return async (m, owner, channel) => {
      const minter = this.#o.actions;
      if (minter === undefined) return m;
      try {
        const links = await minter.mint(c, owner, channel);
        return links === undefined ? m : { ...m, actions: { approve: links.approve, deny: links.deny } };
      } catch (e) {
        this.#o.log.log('error', 'actions_not_minted', { channel, error: (e as Error).message });
        return m;
      }
    };
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
  #pushAll(event: string, build: () => Message, withActions?: WithActions): void {
    for (const job of this.#o.push?.jobs(event, build, withActions) ?? []) {
      if (!this.#status.has('push'))
        this.#status.set('push', pushStatus({ id: 'push', kind: 'web push' }, this.#pushActions));
      this.#queue.push({
        ...job,
        done: (a) => {
          job.done?.(a);
          this.#record('push', a);
        },
      });
    }
  }

  #push(ch: Channel, event: NotifyEventName | 'digest', build: () => Message | Promise<Message>): void {
    // Built once, at the first attempt: a retry sends the same message (and the same actions).
    let made: Promise<Message> | undefined;
    const message = () => {
      made ??= Promise.resolve().then(build);
      return made;
    };
    this.#queue.push({
      channel: ch.id,
      event,
      send: async (signal) => ch.send(await message(), signal),
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
