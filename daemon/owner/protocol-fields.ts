/**
 * What every owner frame schema shares (protocol.ts, protocol-push.ts): the refusal wording that names the
 * field and what it accepts, `req_id`, and the refusal of unknown fields.
 */
import { z } from 'zod';
import { describeInput } from '../../common/field-errors.js';

export function must(field: string, accepts: string) {
  return {
    error: (issue: { input?: unknown }) => `${field} must be ${accepts}, got ${describeInput(issue.input)}`,
  };
}

const REQ_ID = 'a string of at most 64 characters';
export const reqId = z.string(must('req_id', REQ_ID)).max(64, must('req_id', REQ_ID));

export const strict = {
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `${(issue.keys ?? []).join(', ')}: unknown field (not accepted here)`
      : undefined,
};

const ID = 'a pending_id string (1 to 128 characters)';
export const id = z.string(must('id', ID)).min(1, must('id', ID)).max(128, must('id', ID));
const VERSION = "an integer >= 1 (the View's current version)";
export const version = z
  .number(must('version', VERSION))
  .int(must('version', VERSION))
  .min(1, must('version', VERSION));
