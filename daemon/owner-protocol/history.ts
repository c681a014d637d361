/**
 * The history owner frames (contracts 5 and 14): `history` with the search fields, and `audit` — a
 * command's audit entries, or the JSONL export of the commands a panel shows.
 */
import { z } from 'zod';
import { NODE_NAME_RE } from '../config/index.js';
import { id, must, reqId, strict } from './fields.js';

/** `history` answers at most this many commands (contract 5). */
export const HISTORY_MAX = 500;
export const HISTORY_DEFAULT = 100;
const LIMIT = `an integer from 1 to ${HISTORY_MAX}`;
const BEFORE = 'a pending_id or an ISO-8601 time (1 to 128 characters)';
/** The longest text the history search takes (contract 14). */
export const SEARCH_TEXT_MAX = 200;
const TEXT = `a string of at most ${SEARCH_TEXT_MAX} characters`;
const STATES = [
  'awaiting_review',
  'approved',
  'running',
  'succeeded',
  'denied',
  'failed',
  'unknown',
] as const;
const STATE = `one of ${STATES.join(', ')}`;
const SEARCH_CLIENT = 'a client name (1 to 64 characters)';
const NODE = 'a node name (a lower-case letter, then up to 31 of a-z, 0-9, -)';
const TIME = 'an ISO-8601 time such as 2026-11-30T10:00:00.000Z';
const isoTime = (field: string) =>
  z
    .string(must(field, TIME))
    .max(40, must(field, TIME))
    .refine((v) => /^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v)), must(field, TIME))
    .transform((v) => new Date(Date.parse(v)).toISOString());
const IDS = `an array of 1 to ${HISTORY_MAX} pending_ids`;

export const historyFrame = z.strictObject(
  {
    type: z.literal('history'),
    req_id: reqId,
    before: z
      .string(must('before', BEFORE))
      .min(1, must('before', BEFORE))
      .max(128, must('before', BEFORE))
      .optional(),
    limit: z
      .number(must('limit', LIMIT))
      .int(must('limit', LIMIT))
      .min(1, must('limit', LIMIT))
      .max(HISTORY_MAX, must('limit', LIMIT))
      .optional(),
    // Contract 14: the history search; each field narrows what `history` answers.
    text: z.string(must('text', TEXT)).max(SEARCH_TEXT_MAX, must('text', TEXT)).optional(),
    state: z.enum(STATES, must('state', STATE)).optional(),
    client: z
      .string(must('client', SEARCH_CLIENT))
      .min(1, must('client', SEARCH_CLIENT))
      .max(64, must('client', SEARCH_CLIENT))
      .optional(),
    since: isoTime('since').optional(),
    until: isoTime('until').optional(),
    // Contract 16 (an addition to contract 14's search): the node that received the command, exactly.
    node: z.string(must('node', NODE)).regex(NODE_NAME_RE, must('node', NODE)).optional(),
  },
  strict,
);

/**
 * Contract 14: a command's audit entries ("who did what, when"), or — with `command_ids` — the entries of
 * the commands a panel shows, as the JSONL export when `format` is `jsonl`.
 */
export const auditFrame = z
  .strictObject(
    {
      type: z.literal('audit'),
      req_id: reqId,
      command_id: id.optional(),
      command_ids: z
        .array(id, must('command_ids', IDS))
        .min(1, must('command_ids', IDS))
        .max(HISTORY_MAX, must('command_ids', IDS))
        .optional(),
      format: z.literal('jsonl', must('format', 'jsonl')).optional(),
    },
    strict,
  )
  .refine((f) => (f.command_id === undefined) !== (f.command_ids === undefined), {
    message:
      'command_id must be a pending_id string, or command_ids an array of them (exactly one of the two)',
  });

export type HistoryFrame = z.infer<typeof historyFrame>;
export type AuditFrame = z.infer<typeof auditFrame>;
