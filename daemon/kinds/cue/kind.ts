/**
 * What a cue means to the core (contracts 3.3, 4, 8, 9): an identical PENDING cue is its twin; never
 * granted and never a quorum command (every cue opens the owner's approval window); its session UUID is a
 * secret held in memory only (rule 4), so a restart cannot send it; its launches take the session's FIFO
 * lane (rule 6); the owner sees the cue in words and the session's fingerprint.
 */
import { escapeForTerminal as esc } from '../../base/index.js';
import type { Kind } from '../../tool-kind/index.js';
import type {} from './fields.js';

const COMMAND = 'ogf.cue';

export const cueKind: Kind = {
  tool: 'ogf_cue',
  commandName: COMMAND,
  twinRule: true,
  grantRefusal: `${COMMAND} cannot be granted: every cue opens the owner’s approval window`,
  quorum: false,
  carriesSecret: true,
  fields: ['session_file', 'session_key', 'session_fingerprint'],
  identity: ['session_key'],
  shown: ['session_file', 'session_fingerprint'],
  lane: 'session_key',
  summary(command) {
    const a = command.args;
    const parts = [
      `action ${String(a.action)}`,
      `emotion ${String(a.emotion)}`,
      `intensity ${String(a.intensity)}`,
      `gaze ${String(a.gaze)}`,
      `for ${String(a.ttl_ms)} ms`,
    ];
    if (a.message === null) parts.push('clear the message');
    else if (typeof a.message === 'string') parts.push(`say ${JSON.stringify(a.message)}`);
    return `Avatar cue: ${parts.join(', ')}`;
  },
  // Contract 13.1: without include_args a notification says only that a cue waits.
  bareSummary: () => 'Avatar cue',
  lines: (v) => (v.session_fingerprint === undefined ? [] : [`    session: ${esc(v.session_fingerprint)}`]),
};
