/**
 * What a catalog command means to the core (contract 3.1, 8, 9): no twin rule (a repeat is a new request,
 * request_id makes a retry safe), grantable, may need several owners, no secret, summarised by its name
 * and params. Its argv is the View's `display`; `list` adds its reach (contract 21).
 */
import { escapeForTerminal as esc } from '../../base/index.js';
import { bareRunSummary, type Kind, runSummary } from '../../tool-kind/index.js';
import type {} from './fields.js';

export const catalogKind: Kind = {
  tool: 'run_command_wait',
  twinRule: false,
  grantRefusal: undefined,
  quorum: true,
  carriesSecret: false,
  fields: ['reach'],
  identity: [],
  shown: ['reach'],
  summary: runSummary,
  bareSummary: bareRunSummary,
  // Contract 21: what the process may touch, under its command line.
  lines: (v) => (v.reach === undefined ? [] : [`    reach: ${esc(v.reach)}`]),
};
