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
import type { View } from './messages.js';

function stateWords(v: View): string {
  if (v.status === 'PENDING') return `PENDING (${(v.phase ?? v.state).replace('_', ' ')})`;
  return v.reason === undefined ? v.status : `${v.status} ${v.reason}`;
}

/** A command as a few lines of text, none holding a raw control or bidi character. */
export function formatView(v: View): string {
  const lines = [`${esc(v.id)}  ${esc(stateWords(v))}  client ${esc(v.client)}  v${v.version}`];
  lines.push(`    ${esc(v.summary)}`);
  lines.push(`    argv: ${v.display.map(quoteArg).join(' ')}`);
  if (v.session_fingerprint !== undefined) lines.push(`    session: ${esc(v.session_fingerprint)}`);
  if (v.justification !== undefined) lines.push(`    why: ${esc(v.justification)}`);
  if (v.state === 'awaiting_review') lines.push(`    decide before ${esc(v.review_expires_at)}`);
  if (v.reconciliation !== undefined) {
    const note = v.reconciliation.note === undefined ? '' : ` — ${esc(v.reconciliation.note)}`;
    lines.push(`    reconciled: ${v.reconciliation.outcome.replace('_', ' ')}${note}`);
  }
  return lines.join('\n');
}
