/**
 * What a catalog command means to the core (contract 3.1, 8, 9): no twin rule (a repeat is a new request,
 * request_id makes a retry safe), grantable, may need several owners, no secret, summarised by its name
 * and params. Its argv is the View's `display`, so `list` adds nothing.
 */
import { bareRunSummary, type Kind, runSummary } from '../../kind/index.js';
import type {} from './fields.js';

export const catalogKind: Kind = {
  tool: 'run_command_wait',
  twinRule: false,
  grantRefusal: undefined,
  quorum: true,
  carriesSecret: false,
  fields: [],
  identity: [],
  shown: [],
  summary: runSummary,
  bareSummary: bareRunSummary,
  lines: () => [],
};
