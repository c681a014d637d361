/**
 * Quorum on a card (contracts.md 9; 5 (v2): "a card needing several owners shows who approved and how many
 * remain"). A command whose `approvals` is N > 1 waits until N distinct owners approved it; every approval
 * is an upsert carrying `approvals: [{by, at}]`, so these words are rebuilt with the card and stay current.
 * The signed-in owner (`hello.owner`) who already approved cannot approve again — the daemon would answer
 * AlreadyApproved — so their card says so where Approve was; Deny stays, since one deny by any owner denies.
 * Such a command can never be granted (NotGrantable), so it has no Allow… (allow.ts `grantable`).
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { time } from './when.js';

type Approval = { by: string; at: string };

/** How many more owners must approve (0 once the quorum is complete). */
export function remaining(v: View): number {
  return Math.max(0, (v.approvals_needed ?? 1) - (v.approvals ?? []).length);
}

/** The signed-in owner's own approval of this command, if they gave one. */
export function myApproval(v: View, me: string | undefined): Approval | undefined {
  return me === undefined ? undefined : v.approvals?.find((a) => a.by === me);
}

/** Waiting, but not for the signed-in owner: they approved and others must still do so. */
export function waitsForOthers(v: View, me: string | undefined): boolean {
  return v.state === 'awaiting_review' && myApproval(v, me) !== undefined;
}

function owners(n: number): string {
  return n === 1 ? '1 more owner' : `${n} more owners`;
}

/** `a`, `a and b`, `a, b and c` — of nodes, so names can be set in bold. */
function joined(items: Array<Node | string>): Array<Node | string> {
  const out: Array<Node | string> = [];
  items.forEach((item, i) => {
    if (i > 0) out.push(i === items.length - 1 ? ' and ' : ', ');
    out.push(item);
  });
  return out;
}

function approvalWords(a: Approval, me: string | undefined): HTMLElement {
  return el(
    'span',
    { class: 'approval', 'data-by': a.by },
    el('strong', {}, a.by),
    a.by === me ? ' (you)' : '',
    ` at ${time(a.at)}`,
  );
}

/**
 * The quorum line: while it waits `Needs 2 owners · approved by alice at 10:02 · 1 more needed`; once
 * decided `Needed 2 owners · approved by alice at 10:02 and bob at 10:03`, `… · denied by bob`, or
 * `… · 1 more was needed` (or `· nobody approved`) when the review ended or the AI cancelled first. It
 * tells the owners' whole decision, so the meta line leaves it out (card.ts). Null for a command one
 * owner decides.
 */
export function quorumLine(v: View, me: string | undefined): HTMLElement | null {
  const needed = v.approvals_needed;
  if (needed === undefined) return null;
  const list = v.approvals ?? [];
  const waiting = v.state === 'awaiting_review';
  const left = remaining(v);
  const by = v.decided_by;
  const denied = v.reason === 'OwnerDenied' && by !== undefined;
  const parts: Array<Node | string> = [];
  if (list.length > 0) parts.push(' · approved by ', ...joined(list.map((a) => approvalWords(a, me))));
  else if (waiting) parts.push(' · no approval yet');
  else if (!denied) parts.push(' · nobody approved');
  if (waiting) parts.push(` · ${left} more needed`);
  else if (denied) parts.push(' · denied by ', el('strong', {}, by), by === me ? ' (you)' : '');
  else if (left > 0 && list.length > 0) parts.push(` · ${left} more ${left === 1 ? 'was' : 'were'} needed`);
  return el(
    'p',
    {
      class: `quorum${waiting ? ' waiting' : ''}`,
      'data-needed': needed,
      'data-approvals': list.length,
    },
    el('span', { class: 'quorum-need' }, `${waiting ? 'Needs' : 'Needed'} ${needed} owners`),
    ...parts,
  );
}

/** Where Approve was, for the owner who already approved: `You approved at 10:02 — waiting for 1 more owner`. */
export function mineNote(v: View, mine: Approval): HTMLElement {
  return el(
    'p',
    { class: 'mine-approved', id: `mine-${v.id}` },
    `You approved at ${time(mine.at)} — waiting for ${owners(remaining(v))}`,
  );
}

/** The state words of a command that waits for other owners (card.ts `stateWords`). */
export function othersWords(v: View): string {
  return `waiting for ${owners(remaining(v))}`;
}

/** What the card says when its owner presses `a` on a command they already approved. */
export function alreadyMineWords(v: View, mine: Approval): string {
  return `You already approved this at ${time(mine.at)}; it waits for ${owners(remaining(v))}. Deny is still yours to use.`;
}
