/**
 * The `ogf_cue` source (contracts.md 3.3): the tool as published, its input validated first (with the
 * cue's words shared with the bridge client, common/ogf-bridge.ts, in ./input.ts), then either queued as an `ogf.cue` command for the owner
 * (the OGF feature on: ./feature.ts prepares it, the cue executor delivers it) or, feature off, answered at once
 * `DENIED`/`OgfBridgeNotConfigured` with no command, nothing to the owners, and an audit entry.
 */
import type { Tool } from '@modelcontextprotocol/server';
import {
  ACTIONS,
  EMOTIONS,
  GAZES,
  MESSAGE_MAX_CODE_POINTS,
  TTL_DEFAULT_MS,
} from '../../../common/ogf-bridge.js';
import type { Logger } from '../../base/index.js';
import { iso } from '../../base/index.js';
import type { Executor } from '../../core/index.js';
import { AFTER_PENDING, parseInput, resultOutputSchema, waitSecondsJson } from '../../mcp/index.js';
import type { ListingSchema, Prepared, Source, SourceListing } from '../../tool-kind/index.js';
import type { CuesApi } from './feature.js';
import { ogfCueInputSchema } from './input.js';

/** `ogf_cue` before contract 10's `execution.taskSupport`, which depends on the feature (see `CueSource`). */
export const OGF_CUE_TOOL: Tool = {
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
      wait_seconds: waitSecondsJson,
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
};

/** Validates `ogf_cue`'s arguments (contract 3.3); exported for the fuzz tests. */
export const parseCueInput = (args: Record<string, unknown>) =>
  parseInput(OGF_CUE_TOOL, ogfCueInputSchema, args);

const FEATURE_OFF_DETAIL =
  'The OGF bridge is not configured on this broker (ogf_bridge in its config), so nothing was queued or sent.';

export class CueSource implements Source {
  readonly kind = 'ogf_cue';
  readonly executor: Executor | undefined;
  readonly listingSchema: ListingSchema = {
    properties: { ogf_bridge_configured: { type: 'boolean' } },
    required: ['ogf_bridge_configured'],
  };
  readonly #cues: CuesApi | undefined;
  readonly #log: Logger;
  readonly #tools: readonly Tool[];

  /** `feature` is ./feature.ts's createCueFeature(): undefined when `ogf_bridge` is not configured. */
  constructor(feature: { cues: CuesApi; executor: Executor } | undefined, log: Logger) {
    this.#cues = feature?.cues;
    this.executor = feature?.executor;
    this.#log = log;
    // Contract 10: a gated tool may run as a task — but with the feature off its DENIED answer comes at once.
    const taskSupport = feature === undefined ? 'forbidden' : 'optional';
    this.#tools = [{ ...OGF_CUE_TOOL, execution: { taskSupport } }];
  }

  tools(): readonly Tool[] {
    return this.#tools;
  }

  listing(): SourceListing {
    const on = this.#cues !== undefined;
    return {
      fields: { ogf_bridge_configured: on },
      summary: `OGF bridge ${on ? 'configured' : 'not configured'}`,
    };
  }

  prepare(_name: string, args: Record<string, unknown>, client: string): Prepared {
    const input = parseCueInput(args);
    if (!input.ok) return { kind: 'refuse', code: 'InvalidArguments', message: input.message };
    if (this.#cues !== undefined) {
      return {
        kind: 'submit',
        request: this.#cues.prepare(input.value, client),
        waitSeconds: input.value.wait_seconds,
      };
    }
    // Contract 3.3: at once, no command, nothing to the owners, but the audit log records it.
    const { action, emotion, intensity, gaze, ttl_ms } = input.value;
    this.#log.log('info', 'mcp_cue_refused', { client, reason: 'OgfBridgeNotConfigured' });
    return {
      kind: 'answer',
      result: { status: 'DENIED', reason: 'OgfBridgeNotConfigured', detail: FEATURE_OFF_DETAIL },
      audit: {
        at: iso(Date.now()),
        actor: { kind: 'client', name: client },
        action: 'cue_refused',
        detail: {
          reason: 'OgfBridgeNotConfigured',
          cue: { action, emotion, intensity, gaze, ttl_ms, message_given: input.value.message !== undefined },
        },
      },
    };
  }
}
