/**
 * The owner sockets' heartbeat (contracts.md 5): every interval each owner is pinged, and one that did not
 * answer the previous ping is terminated, so a tab that went silent (a sleeping laptop, a dead link) stops
 * counting as connected and its buffer stops growing; the tab reconnects and resyncs from a snapshot.
 */
import type { Logger } from '../base/index.js';
import type { Owner } from './registry.js';

/** How often to ping unless told otherwise (the edge reads OGF_BROKER_OWNER_HEARTBEAT_MS). */
export const HEARTBEAT_MS = 15_000;

/** Marks `owner` alive whenever its socket answers a ping. */
export function watchPongs(owner: Owner): void {
  owner.ws.on('pong', () => {
    owner.alive = true;
  });
}

/**
 * Pings `owners` every `everyMs`, terminating those that missed the last ping; the timer does not keep the
 * process alive. Returns the function that stops it.
 */
export function startHeartbeat(owners: Iterable<Owner>, log: Logger, everyMs = HEARTBEAT_MS): () => void {
  const timer = setInterval(() => beat(owners, log), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

function beat(owners: Iterable<Owner>, log: Logger): void {
  for (const owner of owners) {
    if (!owner.alive) {
      log.log('info', 'owner_heartbeat_lost', { by: owner.by });
      owner.ws.terminate();
      continue;
    }
    owner.alive = false;
    owner.ws.ping();
  }
}
