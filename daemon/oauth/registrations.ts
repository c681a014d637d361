/**
 * Which uncompleted DCR registrations go (contract 15 v4). A registration costs a stranger one
 * unauthenticated POST, so until the owner allows an authorization of it, it counts toward nothing and
 * lives 10 minutes; and since a flood inside those 10 minutes must not grow memory or rows without end,
 * at most REGISTRATIONS_PENDING_MAX wait at once, the oldest giving way to a newer one. A registration
 * whose consent card the owner has opened is never removed (the owner is looking at it): it waits for the
 * owner's decision, which the card's own 10 minutes bound. Pure: clients.ts applies what it returns.
 */
import type { OAuthPendingRegistration } from '../core/index.js';

/** How long a registration that completed no authorization is kept. */
export const REGISTRATION_TTL_MS = 10 * 60 * 1000;
/** Uncompleted registrations kept at once. */
export const REGISTRATIONS_PENDING_MAX = 100;

/**
 * The client_ids to remove from `pending` (oldest first) at `now`: every one past its 10 minutes, and, when
 * `room` new ones must fit, the oldest others beyond REGISTRATIONS_PENDING_MAX - room. `kept` (the opened
 * ones) never go.
 */
export function registrationsToDrop(
  pending: readonly OAuthPendingRegistration[],
  now: number,
  kept: ReadonlySet<string>,
  room = 0,
): string[] {
  const drop: string[] = [];
  const stay: string[] = [];
  for (const r of pending) {
    if (kept.has(r.client_id)) continue;
    if (Date.parse(r.created_at) + REGISTRATION_TTL_MS <= now) drop.push(r.client_id);
    else stay.push(r.client_id);
  }
  const keptCount = pending.length - drop.length - stay.length;
  const over = keptCount + stay.length + room - REGISTRATIONS_PENDING_MAX;
  if (over > 0) drop.push(...stay.slice(0, over));
  return drop;
}

/** True when an uncompleted registration made at `createdAt` is past its 10 minutes at `now`. */
export function registrationExpired(createdAt: string, now: number): boolean {
  return Date.parse(createdAt) + REGISTRATION_TTL_MS <= now;
}
