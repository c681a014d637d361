/**
 * How the terminal shows a command: one header line (id, status in words, client, times) and the exact
 * argv that runs, so `ogf-broker list` tells the owner the same things the panel's card does.
 *
 * Every text printed here may come from the AI (summary, argv, justification, notes — and anything a row
 * stored by an older version holds), so each passes through text-rules.ts on its way out: control and bidi
 * characters print as visible escapes (`\u001b`) and can never redraw the terminal (contract 5 (v2)).
 * Escaping happens here, at output, not only at input, because rows written before the input rule (1.3
 * (v2)) may still hold them. Newlines print as `\n` too: each field stays on its one line, so an allowed
 * multi-line value cannot draw lines that look like another command's header. (Indenting continuation
 * lines was the alternative; it keeps line breaks readable but still lets a value draw lines that pass for
 * this command's own `argv:` or `why:` lines.)
 */

import type { Grant, View } from '../../common/owner-messages.js';
import { escapeForTerminal as esc, quoteArg } from '../base/index.js';
import { KINDS } from '../kinds/index.js';

function stateWords(v: View): string {
  if (v.status === 'PENDING') return `PENDING (${(v.phase ?? v.state).replace('_', ' ')})`;
  return v.reason === undefined ? v.status : `${v.status} ${v.reason}`;
}

/**
 * Contract 16: whether a listing names each command's node — when it holds commands of more than one
 * (one machine alone stays uncluttered; a command stored before nodes has none).
 */
export function showsNodes(views: readonly View[]): boolean {
  const nodes = new Set<string>();
  for (const v of views) if (v.node !== undefined) nodes.add(v.node);
  return nodes.size > 1;
}

/**
 * A command as a few lines of text, none holding a raw control or bidi character; with `node` (a listing
 * of several nodes' commands, showsNodes) the header names the node that received it.
 */
export function formatView(v: View, opts: { node?: boolean } = {}): string {
  // Who decided (contract 9: an owner's name), so the terminal answers "who approved this?" as the panel does.
  const by = v.decided_by === undefined ? '' : `  decided by ${esc(v.decided_by)}`;
  const node = opts.node === true ? `  node ${v.node === undefined ? '(none)' : esc(v.node)}` : '';
  const lines = [`${esc(v.id)}  ${esc(stateWords(v))}  client ${esc(v.client)}${node}  v${v.version}${by}`];
  lines.push(`    ${esc(v.summary)}`);
  lines.push(`    argv: ${v.display.map(quoteArg).join(' ')}`);
  // Its kind's own lines (kinds/<kind>/kind.ts): an upstream call's server, claims and arguments, a cue's session.
  lines.push(...(KINDS.find(v.tool)?.lines(v) ?? []));
  if (v.justification !== undefined) lines.push(`    why: ${esc(v.justification)}`);
  if (v.state === 'awaiting_review') lines.push(`    decide before ${esc(v.review_expires_at)}`);
  if (v.approvals_needed !== undefined) {
    // Contract 9: who approved a quorum command so far, and how many more it needs.
    const given = (v.approvals ?? []).map((a) => `${esc(a.by)} at ${esc(a.at)}`).join(', ') || 'none yet';
    const left = v.approvals_needed - (v.approvals?.length ?? 0);
    const more = v.state === 'awaiting_review' && left > 0 ? ` — ${left} more needed` : '';
    lines.push(`    approvals (${v.approvals_needed} needed): ${given}${more}`);
  }
  if (v.reconciliation !== undefined) {
    const note = v.reconciliation.note === undefined ? '' : ` — ${esc(v.reconciliation.note)}`;
    lines.push(`    reconciled: ${v.reconciliation.outcome.replace('_', ' ')}${note}`);
  }
  return lines.join('\n');
}

/** "14 min", "3 h 5 min", "2 days": how long until `atMs`, for a person. */
export function timeLeft(atMs: number, nowMs: number): string {
  const min = Math.max(0, Math.ceil((atMs - nowMs) / 60_000));
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} days`;
}

/** A grant as one line (contract 8): id, state, command, client, args or "any", time and uses left, who. */
export function formatGrant(g: Grant, nowMs: number): string {
  const parts = [esc(g.id), g.state, esc(g.command), `client ${esc(g.client)}`];
  parts.push(
    g.when !== undefined
      ? `when ${esc(g.when)}`
      : g.args === undefined
        ? 'any arguments'
        : `args ${esc(JSON.stringify(g.args))}`,
  );
  // Contract 16 (v4): grant lists show the node whose commands it approves (`*`: every node's).
  if (g.node !== undefined) parts.push(`node ${esc(g.node)}`);
  if (g.state === 'live') {
    parts.push(
      g.expires_at === undefined ? 'no expiry' : `${timeLeft(Date.parse(g.expires_at), nowMs)} left`,
    );
    if (g.uses_left !== undefined) parts.push(`${g.uses_left} use${g.uses_left === 1 ? '' : 's'} left`);
  } else if (g.ended_at !== undefined) {
    parts.push(`ended ${esc(g.ended_at)}`);
  }
  parts.push(`by ${esc(g.created_by)}`);
  if (g.note !== undefined) parts.push(`note: ${esc(g.note)}`);
  return parts.join('  ');
}
