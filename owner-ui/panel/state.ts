/**
 * What the panel holds between frames (contract 5), in one place instead of module variables of app.ts:
 * the commands it shows (by id), the requests it sent and awaits a reply to, the clock skew to the daemon
 * and the signed-in owner. Each frame that changes them is one method, pure over the maps (state.test.ts);
 * app.ts renders after calling it.
 */
import type { View } from '../../common/owner-messages.js';

/** A request the panel sent and awaits a `reply` to: which command or grant, and what was asked. */
export interface PendingRequest {
  id: string;
  action: string;
}

export class PanelState {
  /** Every command the panel holds, by id: the queue, in progress and the history shown. */
  readonly views = new Map<string, View>();
  /** Requests sent on this connection, by req_id. */
  readonly requests = new Map<string, PendingRequest>();
  /** The daemon's clock minus this browser's (`hello.server_time`), so countdowns follow the daemon. */
  skewMs = 0;
  /** The signed-in owner (`hello.owner`): a quorum card they approved waits for the others (contract 9). */
  me: string | undefined;
  #nextReq = 1;

  /** A fresh req_id: `prefix` says which part of the panel asked (`p` decisions, `h` history, …). */
  reqId(prefix: string): string {
    return `${prefix}${this.#nextReq++}`;
  }

  /** Now on the daemon's clock. */
  now(nowMs = Date.now()): number {
    return nowMs + this.skewMs;
  }

  /** `hello`: the skew and the owner. */
  hello(serverTime: string, owner: string, nowMs = Date.now()): void {
    this.skewMs = Date.parse(serverTime) - nowMs;
    this.me = owner;
  }

  /**
   * `snapshot`: replaces everything, so a reconnecting tab resyncs and misses nothing. Requests sent on the
   * old connection get no reply: the snapshot says what happened to them.
   */
  snapshot(commands: readonly View[]): void {
    this.views.clear();
    for (const v of commands) this.views.set(v.id, v);
    this.requests.clear();
  }

  /** `upsert`: false when it is older than the version held (frames may cross a snapshot), else held. */
  upsert(command: View): boolean {
    const prev = this.views.get(command.id);
    if (prev !== undefined && prev.version > command.version) return false;
    this.views.set(command.id, command);
    return true;
  }

  /** `history`: older commands added; one already held (perhaps newer by an upsert) is kept as it is. */
  history(commands: readonly View[]): void {
    for (const v of commands) if (!this.views.has(v.id)) this.views.set(v.id, v);
  }

  /** Forgets everything shown (logged out: what is on screen is no longer live). */
  clear(): void {
    this.views.clear();
  }
}
