/**
 * What the daemon sends owners (contracts.md 5): one message to one owner, or every committed change to
 * every owner, in commit order, bounded by what each socket can absorb.
 *
 * Commit order: the broker calls the hub's one subscription synchronously after each commit, and it lands
 * here (`command`, `text`); a new socket gets its snapshot synchronously in the same turn it joins the
 * registry, so no change can fall between a snapshot and the first upsert. A socket that cannot keep up
 * (send buffer past a bound) is cut rather than silently skipped: its tab reconnects and resyncs from a
 * fresh snapshot, so it misses nothing.
 *
 * No content and no frame size can stop the daemon (contract 5, v2). A snapshot or history is one message
 * sent in fragments of about FRAGMENT_BYTES, each encoded from the Views' cached text (fragments.ts), so
 * no string larger than one View is ever made (the whole snapshot used to be one string: past V8's string
 * limit its RangeError escaped the upgrade callback and killed the daemon, at every owner connect, restart
 * or not). Anything that throws while sending to one owner closes that owner's socket (1011) and is logged.
 */

import type { Socket } from 'node:net';
import type { ServerMessage } from '../../common/owner-messages.js';
import type { Logger } from '../base/index.js';
import type { Command, KindPolicies } from '../core/index.js';
import { viewJson } from '../core/index.js';
import { FragmentPool, FragmentWriter } from './fragments.js';
import type { Owner, OwnerRegistry } from './registry.js';

/**
 * A socket with this much unsent data besides its snapshot (or largest history) is too slow to follow; it
 * is cut and resyncs on reconnect. Counted on top of what the snapshot left queued, so a healthy tab is
 * never cut for having been sent a big snapshot: with full PENDING caps that may be hundreds of MiB
 * (the worst case is computed in test/attack-flood.test.ts), and a flood of upserts may follow at once.
 */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** Sends to one owner or to all of them; one per hub. */
export class FanOut {
  readonly #owners: OwnerRegistry;
  readonly #log: Logger;
  /** True once the hub closed: nothing more is fanned out. */
  readonly #closed: () => boolean;
  /** The buffers snapshots and histories are encoded into, reused once each socket has written them. */
  readonly #fragments = new FragmentPool();
  /** What a View shows of each kind (core/model/owner-view.ts), from the context the edge was handed. */
  readonly #kinds: KindPolicies;
  /** The sockets holding this batch's fan-out (#hold); written out together in the next microtask. */
  readonly #held = new Set<Socket>();

  constructor(owners: OwnerRegistry, log: Logger, closed: () => boolean, kinds: KindPolicies) {
    this.#owners = owners;
    this.#kinds = kinds;
    this.#log = log;
    this.#closed = closed;
  }

  /**
   * Sends `head` + the commands' Views joined by commas + `tail` as one text message, in fragments of
   * about FRAGMENT_BYTES (RFC 6455 5.4; browsers and ws reassemble them) encoded straight from each
   * View's cached text into pooled buffers (fragments.ts; ws calls back once a fragment is written or
   * dropped), so its size is bounded by memory, not by the longest string V8 can make. Synchronous, so
   * nothing interleaves with the fragments.
   */
  sendViews(owner: Owner, head: string, commands: readonly Command[], tail: string): void {
    const ws = owner.ws;
    if (!this.#canSend(owner)) return;
    // binary: false: a Buffer is sent as a text frame only when told so (contract 5: JSON text frames).
    const out = new FragmentWriter(
      (bytes, fin, done) => ws.send(bytes, { binary: false, fin }, done),
      this.#fragments,
    );
    out.write(head);
    commands.forEach((c, i) => {
      out.write(viewJson(c, this.#kinds), i > 0);
    });
    out.end(tail);
    owner.allowance = Math.max(owner.allowance, ws.bufferedAmount);
  }

  /** Sends one message to one owner. */
  send(owner: Owner, message: ServerMessage): void {
    this.sendText(owner, JSON.stringify(message));
  }

  /** Sends text already made (an `args` answer), under the same slow-socket bound as every frame. */
  sendText(owner: Owner, text: string): void {
    if (this.#canSend(owner)) owner.ws.send(text);
  }

  /**
   * Holds what a commit fans out to `owner` in its socket (cork) until the next microtask: a commit's
   * changes reach each owner in one write (bench row 8: an approval and its `running` were two writes ahead
   * of the approved call's send), released before the work its callers resume (queued ahead of them), so no
   * later work of the turn — a launch, a notification's encryption — delays the owners (a release at
   * setImmediate put row 12's upserts 7 ms behind its webhooks). Order is the socket's: every frame, held or
   * not, leaves in the order it was sent. `ws` has no cork of its own; its socket is the `_socket` it writes
   * frames to (and corks per frame).
   */
  #hold(owner: Owner): void {
    const socket = (owner.ws as unknown as { _socket?: Socket })._socket;
    if (socket === undefined || this.#held.has(socket)) return;
    socket.cork();
    this.#held.add(socket);
    if (this.#held.size === 1) queueMicrotask(() => this.#release());
  }

  #release(): void {
    const held = [...this.#held];
    this.#held.clear();
    for (const socket of held) {
      try {
        socket.uncork();
      } catch (e) {
        // A socket that cannot write is closed by its own error; the others are still released.
        this.#log.log('warn', 'owner_uncork_failed', { error: (e as Error).message });
      }
    }
  }

  /** False when the socket is closed, or too slow to follow (then it is cut, see MAX_BUFFERED_BYTES). */
  #canSend(owner: Owner): boolean {
    if (owner.ws.readyState !== owner.ws.OPEN) return false;
    if (owner.ws.bufferedAmount > MAX_BUFFERED_BYTES + owner.allowance) {
      this.#log.log('warn', 'owner_too_slow', { by: owner.by });
      owner.ws.terminate();
      return false;
    }
    return true;
  }

  /** A committed change, as `upsert` to every owner. Called inside the broker right after its commit. */
  command(command: Command): void {
    // No owner connected: nothing to build (an owner who connects reads the snapshot, which builds its own).
    if (this.#closed() || this.#owners.size === 0) return;
    let text: string;
    try {
      text = `{"type":"upsert","command":${viewJson(command, this.#kinds)}}`;
    } catch (e) {
      // Called inside the broker right after its commit: never throw back into it. Every owner would miss
      // this change, so every owner resyncs.
      for (const owner of this.#owners) this.#owners.drop(owner, 'owner_fanout_failed', e);
      return;
    }
    this.text(text);
  }

  /** One ready message (a `grant_upsert`, a `setup`) to every owner. */
  text(text: string): void {
    if (this.#closed()) return;
    for (const owner of this.#owners) {
      try {
        this.#hold(owner);
        this.sendText(owner, text);
      } catch (e) {
        this.#owners.drop(owner, 'owner_send_failed', e);
      }
    }
  }
}
