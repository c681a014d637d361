/**
 * The five MCP tools as published in `tools/list` (contracts.md 3.1): JSON input schemas, output schemas,
 * descriptions and honest annotations. The lists and ranges come from the same constants the validators
 * use (bridge-client/protocol.ts, ./input.ts), so what a client reads is what the product enforces.
 *
 * Input is validated in the product (./input.ts), never by the SDK, so every refusal carries a stable
 * code and names the field (contract 3.2).
 */
import type { JSONObject, Tool } from '@modelcontextprotocol/server';
import {
  ACTIONS,
  EMOTIONS,
  GAZES,
  MESSAGE_MAX_CODE_POINTS,
  TTL_DEFAULT_MS,
} from '../../bridge-client/protocol.js';
import { DENY_REASONS, FAIL_REASONS, UNKNOWN_REASONS } from '../errors.js';

export const TOOL_NAMES = [
  'ogf_cue',
  'run_command_wait',
  'await_command_result',
  'cancel_command',
  'list_commands',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const WAIT_DEFAULT_S = 50;
export const WAIT_MAX_S = 90;
export const REQUEST_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$';
export const PENDING_ID_PATTERN = '^[A-Za-z0-9_-]{8,64}$';
export const JUSTIFICATION_MAX = 500;

type JsonSchema = JSONObject;

const waitSeconds: JsonSchema = {
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

const listOutputSchema = {
  type: 'object' as const,
  properties: {
    commands: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          params_schema: { type: 'object', description: 'JSON Schema of the command args.' },
          timeout_s: { type: 'integer' },
        },
        required: ['name', 'description', 'params_schema', 'timeout_s'],
      },
    },
    ogf_bridge_configured: { type: 'boolean' },
    upstreams: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          connected: { type: 'boolean' },
          tools: {
            type: 'array',
            items: { type: 'string' },
            description: 'Exposed names (<upstream>__<tool>).',
          },
        },
        required: ['name', 'connected', 'tools'],
      },
    },
  },
  required: ['commands', 'ogf_bridge_configured'],
};

const AFTER_PENDING =
  'A PENDING answer is not a failure: call await_command_result with the same pending_id; never resend the request. ' +
  'ERROR and UNKNOWN are final: do not retry or replay, the owner checks and reconciles.';

/** The five tools, before contract 10's per-daemon `execution.taskSupport` is set (see `toolsFor`). */
export const TOOLS: Tool[] = [
  {
    name: 'ogf_cue',
    title: 'Send an avatar cue (owner approval)',
    description:
      'Ask for one short, bounded cue on the OGF avatar: an action, an emotion with an intensity, a gaze, and an ' +
      'optional message. Only the listed values and ranges are accepted. Every cue waits for the owner to approve ' +
      'it; the owner sees a one-time session file path, never the session UUID. Returns the same result as ' +
      `run_command_wait. ${AFTER_PENDING} A DENIED cue sent nothing. If the OGF bridge is not set up, the answer ` +
      'is DENIED with reason OgfBridgeNotConfigured.',
    inputSchema: {
      type: 'object',
      properties: {
        session_id: {
          type: 'string',
          pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
          description:
            "The avatar app's current session UUID, shown in its Bridge panel and given by the owner. It is a " +
            'secret: it is never shown to anyone, stored, or put on a command line.',
        },
        action: {
          type: 'string',
          enum: [...ACTIONS],
          description: 'What the avatar does (presentation only).',
        },
        emotion: { type: 'string', enum: [...EMOTIONS], description: 'The feeling the avatar shows.' },
        intensity: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          description: 'How strongly, a JSON number from 0 to 1; strings and booleans are refused.',
        },
        gaze: {
          type: 'string',
          enum: [...GAZES],
          description: 'Where the avatar looks; nothing else is accepted.',
        },
        ttl_ms: {
          type: 'integer',
          minimum: 100,
          maximum: 10000,
          default: TTL_DEFAULT_MS,
          description: 'How long the cue lasts, in milliseconds (100 to 10000, default 3000).',
        },
        message: {
          type: ['string', 'null'],
          maxLength: MESSAGE_MAX_CODE_POINTS,
          description:
            'Text to show, at most 120 Unicode code points, no control characters. Leave it out to keep what is ' +
            'shown; null clears it.',
        },
        wait_seconds: waitSeconds,
      },
      required: ['session_id', 'action', 'emotion', 'intensity', 'gaze'],
      additionalProperties: false,
    },
    outputSchema: resultOutputSchema,
    annotations: {
      title: 'Send an avatar cue (owner approval)',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
  },
  {
    name: 'run_command_wait',
    title: 'Run a catalog command (owner approval)',
    description:
      "Ask to run one command from the owner's catalog (see list_commands) with its params. Nothing runs until the " +
      'owner approves the exact command line. Waits up to wait_seconds for the outcome. Give a request_id to make ' +
      `a retry safe: the same request_id returns the existing command instead of a new one. ${AFTER_PENDING}`,
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, maxLength: 64, description: 'A catalog command name.' },
        args: {
          type: 'object',
          description: "The command's params as listed by list_commands; {} when it has none.",
        },
        justification: {
          type: 'string',
          maxLength: JUSTIFICATION_MAX,
          description: 'Why you ask, in at most 500 characters; the owner reads it before deciding.',
        },
        wait_seconds: waitSeconds,
        request_id: {
          type: 'string',
          pattern: REQUEST_ID_PATTERN,
          description:
            'Your idempotency key; reusing it with different command, args or justification is refused.',
        },
      },
      required: ['command', 'args'],
      additionalProperties: false,
    },
    outputSchema: resultOutputSchema,
    annotations: {
      title: 'Run a catalog command (owner approval)',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
  },
  {
    name: 'await_command_result',
    title: 'Wait for a command result',
    description:
      'Watch a command you queued (by its pending_id) until it reaches a final status or wait_seconds pass, then ' +
      'return its current result. Call it again while the status is PENDING.',
    inputSchema: {
      type: 'object',
      properties: { pending_id: pendingId, wait_seconds: waitSeconds },
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
  },
  {
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
  },
  {
    name: 'list_commands',
    title: 'List catalog commands',
    description:
      'List the commands the owner allows you to request (name, description, JSON Schema of their params, timeout) ' +
      'and whether the OGF avatar bridge is configured for ogf_cue.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: listOutputSchema,
    annotations: {
      title: 'List catalog commands',
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
];

/** Contract 10: the gated tools run as tasks on request; the others never do. */
const GATED: readonly ToolName[] = ['run_command_wait', 'ogf_cue'];

/**
 * What `tools/list` returns for a daemon: `execution.taskSupport` is "optional" on the gated tools and
 * "forbidden" on the others — and on `ogf_cue` when the OGF feature is off, whose DENIED answer comes at once.
 */
export function toolsFor(opts: { cues: boolean }): Tool[] {
  return TOOLS.map((t) => {
    const gated = GATED.includes(t.name as ToolName) && (t.name !== 'ogf_cue' || opts.cues);
    return { ...t, execution: { taskSupport: gated ? 'optional' : 'forbidden' } };
  });
}
