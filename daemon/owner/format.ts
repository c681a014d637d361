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
import { escapeForTerminal as esc, quoteArg } from '../text-rules.js';
import type { Grant, View } from './messages.js';

function stateWords(v: View): string {
  if (v.status === 'PENDING') return `PENDING (${(v.phase ?? v.state).replace('_', ' ')})`;
  return v.reason === undefined ? v.status : `${v.status} ${v.reason}`;
}

/** The server's annotations in words: the same words as the panel (owner-ui/upstream.ts claimWords). */
function claimWords(a: Record<string, unknown> | undefined): string[] {
  if (a === undefined) return [];
  const words: string[] = [];
  if (a.readOnlyHint === true) words.push('read-only');
  if (a.destructiveHint === true) words.push('destructive');
  if (a.destructiveHint === false) words.push('not destructive');
  if (a.idempotentHint === true) words.push('idempotent');
  if (a.openWorldHint === true) words.push('reaches the outside world');
  if (a.openWorldHint === false) words.push('closed world');
  return words;
}

/** Contract 7: an upstream call shows the server and tool, its claims, and every argument whole (escaped). */
function upstreamLines(v: View): string[] {
  const u = v.upstream;
  if (u === undefined) return [];
  const lines = [
    `    upstream: ${esc(u.name)}  tool: ${esc(u.tool)}${u.title === undefined ? '' : `  (${esc(u.title)})`}`,
  ];
  const claims = claimWords(u.annotations);
  if (claims.length > 0) lines.push(`    ${claims.map((c) => `server says: ${c}`).join('; ')}`);
  lines.push(...argLines(v));
  return lines;
}

/** "1,000,004": sizes for people. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * Every argument, one line each, in the order the AI gave them. Arguments over 16 KiB of JSON come as a
 * preview (View.args_truncated, core/args-preview.ts): `list` fetches nothing more (the panel loads them
 * whole), so it says they are shortened and prints each cut one by name, size and start — none hidden.
 */
function argLines(v: View): string[] {
  const rows: Array<[number, string]> = Object.entries(v.args).map(([k, value], i) => [
    i,
    `    arg ${esc(k)}: ${esc(JSON.stringify(value))}`,
  ]);
  if (v.args_truncated !== true) return rows.map(([, line]) => line);
  const cut = v.args_cut ?? [];
  const kept = rows.map(([, line]) => line);
  // Kept arguments keep their relative order; a cut one goes back to its place (`at`).
  const ordered: string[] = [];
  let k = 0;
  for (const c of [...cut].sort((a, b) => a.at - b.at)) {
    while (k < kept.length && ordered.length < c.at) ordered.push(kept[k++]!);
    const name =
      c.name_chars === undefined ? esc(c.name) : `${esc(c.name)}… (${count(c.name_chars)} characters)`;
    ordered.push(
      `    arg ${name}: ${esc(c.start)}… (${count(c.bytes)} bytes of JSON; open the panel to read all)`,
    );
  }
  ordered.push(...kept.slice(k));
  const hidden =
    v.args_hidden === undefined
      ? []
      : [`    … and ${count(v.args_hidden)} more arguments not listed here; open the panel to read all`];
  return [
    `    arguments shortened here: ${count(v.args_bytes ?? 0)} bytes of JSON in all; approving sends them whole`,
    ...ordered,
    ...hidden,
  ];
}

/** A command as a few lines of text, none holding a raw control or bidi character. */
export function formatView(v: View): string {
  // Who decided (contract 9: an owner's name), so the terminal answers "who approved this?" as the panel does.
  const by = v.decided_by === undefined ? '' : `  decided by ${esc(v.decided_by)}`;
  const lines = [`${esc(v.id)}  ${esc(stateWords(v))}  client ${esc(v.client)}  v${v.version}${by}`];
  lines.push(`    ${esc(v.summary)}`);
  lines.push(`    argv: ${v.display.map(quoteArg).join(' ')}`);
  lines.push(...upstreamLines(v));
  if (v.session_fingerprint !== undefined) lines.push(`    session: ${esc(v.session_fingerprint)}`);
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
  parts.push(g.args === undefined ? 'any arguments' : `args ${esc(JSON.stringify(g.args))}`);
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
