/**
 * How the terminal shows a command: one header line (id, status in words, client, times) and the exact
 * argv that runs, so `ogf-broker list` tells the owner the same things the panel's card does.
 */
import type { View } from './messages.js';

function stateWords(v: View): string {
  if (v.status === 'PENDING') return `PENDING (${(v.phase ?? v.state).replace('_', ' ')})`;
  return v.reason === undefined ? v.status : `${v.status} ${v.reason}`;
}

/** Shell-like quoting for display only (nothing is ever run through a shell). */
function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** A command as a few lines of text. */
export function formatView(v: View): string {
  const lines = [`${v.id}  ${stateWords(v)}  client ${v.client}  v${v.version}`];
  lines.push(`    ${v.summary}`);
  lines.push(`    argv: ${v.display.map(quote).join(' ')}`);
  if (v.session_fingerprint !== undefined) lines.push(`    session: ${v.session_fingerprint}`);
  if (v.justification !== undefined) lines.push(`    why: ${v.justification}`);
  if (v.state === 'awaiting_review') lines.push(`    decide before ${v.review_expires_at}`);
  if (v.reconciliation !== undefined) {
    const note = v.reconciliation.note === undefined ? '' : ` — ${v.reconciliation.note}`;
    lines.push(`    reconciled: ${v.reconciliation.outcome.replace('_', ' ')}${note}`);
  }
  return lines.join('\n');
}
