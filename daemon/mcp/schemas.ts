/**
 * The JSON Schema pieces every tool shares (contracts.md 3.1, 3.2) — the wait, the pending_id, contract
 * 3.2's result as an output schema — and the edge's own lifecycle tools as published in `tools/list`:
 * `await_command_result`, `cancel_command` and `list_commands`, which act on the commands of every source
 * (the sources publish their own tools: daemon/kinds/). The ranges come from the same constants the
 * validators use (./input.ts), so what a client reads is what the product enforces.
 *
 * Input is validated in the product (./input.ts), never by the SDK, so every refusal carries a stable
 * code and names the field (contract 3.2).
 */
import type { JSONObject, Tool } from '@modelcontextprotocol/server';
import { DENY_REASONS, FAIL_REASONS, UNKNOWN_REASONS } from '../base/index.js';
import type { ListingSchema } from '../tool-kind/index.js';

export const WAIT_DEFAULT_S = 50;
export const WAIT_MAX_S = 90;
export const REQUEST_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$';
export const PENDING_ID_PATTERN = '^[A-Za-z0-9_-]{8,64}$';
export const JUSTIFICATION_MAX = 500;

type JsonSchema = JSONObject;

/** `wait_seconds` as every waiting tool publishes it. */
export const waitSecondsJson: JsonSchema = {
  type: 'number',
  minimum: 0,
  maximum: WAIT_MAX_S,
  default: WAIT_DEFAULT_S,
  description:
    'How long this call watches the command before answering, 0 to 90 seconds (default 50). 0 answers at once. ' +
    'If the command is still PENDING when the wait ends, call await_command_result with the same pending_id.',
};

const pendingId: JsonSchema = {
  type: 'string',
  pattern: PENDING_ID_PATTERN,
  description: 'The pending_id an earlier ogf_cue or run_command_wait call returned to this client.',
};

const iso: JsonSchema = { type: 'string', description: 'ISO-8601 UTC time with milliseconds.' };

/** Contract 3.2's result; `pending_id` is not required because the feature-off cue result has none. */
export const resultOutputSchema = {
  type: 'object' as const,
  properties: {
    pending_id: { type: 'string', description: 'Keep it: await_command_result and cancel_command take it.' },
    status: { type: 'string', enum: ['PENDING', 'SUCCEEDED', 'DENIED', 'ERROR', 'UNKNOWN'] },
    phase: { type: 'string', enum: ['awaiting_review', 'approved', 'running'] },
    command: { type: 'string' },
    display: { type: 'array', items: { type: 'string' }, description: 'The exact argv the owner approves.' },
    created_at: iso,
    review_expires_at: iso,
    reason: { type: 'string', enum: [...new Set([...DENY_REASONS, ...FAIL_REASONS, ...UNKNOWN_REASONS])] },
    detail: { type: 'string' },
    decided_at: iso,
    started_at: iso,
    finished_at: iso,
    exit_code: { type: 'integer' },
    signal: { type: 'string' },
    stdout: { type: 'string' },
    stderr: { type: 'string' },
    output_truncated: { type: 'boolean' },
    owner_note: { type: 'string' },
    delivery: {
      type: 'object',
      properties: { cue_id: { type: 'string' }, applied_at: { type: 'string' } },
      required: ['cue_id', 'applied_at'],
    },
    reconciliation: {
      type: 'object',
      properties: {
        outcome: { type: 'string', enum: ['delivered', 'not_delivered'] },
        note: { type: 'string' },
        at: { type: 'string' },
      },
      required: ['outcome', 'at'],
    },
  },
  required: ['status'],
};

/** Said by every tool that may answer PENDING. */
export const AFTER_PENDING =
  'A PENDING answer is not a failure: call await_command_result with the same pending_id; never resend the request. ' +
  'ERROR and UNKNOWN are final: do not retry or replay, the owner checks and reconciles.';

/** The tools that only read or withdraw commands never run as tasks (contract 10). */
const NOT_A_TASK = { taskSupport: 'forbidden' } as const;

export const AWAIT_TOOL: Tool = {
  name: 'await_command_result',
  title: 'Wait for a command result',
  description:
    'Watch a command you queued (by its pending_id) until it reaches a final status or wait_seconds pass, then ' +
    'return its current result. Call it again while the status is PENDING.',
  inputSchema: {
    type: 'object',
    properties: { pending_id: pendingId, wait_seconds: waitSecondsJson },
    required: ['pending_id'],
    additionalProperties: false,
  },
  outputSchema: resultOutputSchema,
  annotations: {
    title: 'Wait for a command result',
    readOnlyHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  execution: NOT_A_TASK,
};

export const CANCEL_TOOL: Tool = {
  name: 'cancel_command',
  title: 'Cancel a queued command',
  description:
    'Withdraw a command you queued while the owner has not decided yet (it becomes DENIED, CancelledByCaller). ' +
    'Once decided, nothing changes and the current result is returned.',
  inputSchema: {
    type: 'object',
    properties: { pending_id: pendingId },
    required: ['pending_id'],
    additionalProperties: false,
  },
  outputSchema: resultOutputSchema,
  annotations: {
    title: 'Cancel a queued command',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  execution: NOT_A_TASK,
};

/** `list_commands`, whose output schema is the union of the sources' parts (contract 3.1). */
export function listCommandsTool(parts: readonly ListingSchema[]): Tool {
  return {
    name: 'list_commands',
    title: 'List catalog commands',
    description:
      'List the commands the owner allows you to request (name, description, JSON Schema of their params, timeout) ' +
      'and whether the OGF avatar bridge is configured for ogf_cue.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: {
      type: 'object',
      properties: Object.assign({}, ...parts.map((p) => p.properties)),
      required: parts.flatMap((p) => p.required),
    },
    annotations: {
      title: 'List catalog commands',
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    execution: NOT_A_TASK,
  };
}
