/**
 * Which commands a notification may offer Approve and Deny for (contract 19 (v4)): one awaiting review that
 * one owner may decide (no quorum: contract 9), that needs no passkey (contract 13.3: a passkey's assertion
 * cannot travel through a notification), and whose preview, if it gets one, has said what it will say —
 * ready or failed. A waiting message sent before its preview settled (the 2 s wait of contract 13.1 ran
 * out) carries no actions: the owner would decide on less than the card shows. Checked when a message is
 * minted and again when an action is used, so a reload that raised a command's approvals or the command's
 * own change stops what was offered before.
 */
import type { Command } from '../core/index.js';

/** Why `c` gets no actions, or undefined when it may. */
export function noOfferReason(c: Command): string | undefined {
  if (c.phase.state !== 'awaiting_review') return 'it no longer waits for review';
  if ((c.approvals_needed ?? 1) > 1) return 'it needs several owners to approve';
  if (c.passkey_required === true) return 'it needs a passkey to approve';
  if (c.preview?.status === 'pending') return 'its preview is not ready';
  return undefined;
}

export function offersActions(c: Command): boolean {
  return noOfferReason(c) === undefined;
}
