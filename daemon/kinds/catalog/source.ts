/**
 * The catalog source (contracts.md 1.3, 3.1): `run_command_wait` as published, its input validated in the
 * product, the named command's args checked and its argv built by the owner's catalog (./catalog.ts),
 * queued as a command the process executor runs on approval. Also the catalog's part of `list_commands`.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { mustBe } from '../../../common/field-errors.js';
import { charactersAccepted, hasForbiddenCharacter } from '../../base/index.js';
import type { Config } from '../../config/index.js';
import type { Executor } from '../../core/index.js';
import {
  AFTER_PENDING,
  JUSTIFICATION_MAX,
  parseInput,
  REQUEST_ID_PATTERN,
  resultOutputSchema,
  waitSeconds,
  waitSecondsJson,
} from '../../mcp/index.js';
import type { ListingSchema, Prepared, Source, SourceListing } from '../../tool-kind/index.js';
import type { Catalog } from './catalog.js';

export const RUN_COMMAND_TOOL: Tool = {
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
      wait_seconds: waitSecondsJson,
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
  // Contract 10: a gated tool, so it may run as a task.
  execution: { taskSupport: 'optional' },
};

const REQUEST_ID_RE = new RegExp(REQUEST_ID_PATTERN);

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const COMMAND = 'a catalog command name of 1 to 64 characters (see list_commands)';
const ARGS = "an object holding the command's params ({} when it has none)";
// Contract 3.2: the justification follows the string params' character rule. It may be several lines
// (newline and tab); any other control or a bidi control could disguise what the owner reads.
const JUSTIFICATION = `a string of at most ${JUSTIFICATION_MAX} characters ${charactersAccepted(true)}`;
const REQUEST_ID = `a string matching ${REQUEST_ID_PATTERN}`;

export const runCommandInputSchema = z.strictObject({
  command: z
    .string(mustBe('command', COMMAND))
    .min(1, mustBe('command', COMMAND))
    .max(64, mustBe('command', COMMAND)),
  args: z.record(z.string(), z.unknown(), mustBe('args', ARGS)),
  justification: z
    .string(mustBe('justification', JUSTIFICATION))
    .refine((s) => codePoints(s) <= JUSTIFICATION_MAX, {
      error: (issue) =>
        `justification must be ${JUSTIFICATION}, got ${codePoints(String(issue.input))} characters`,
    })
    .refine((s) => !hasForbiddenCharacter(s, true), {
      error: `justification must be ${JUSTIFICATION}, got a control character`,
    })
    .optional(),
  wait_seconds: waitSeconds,
  request_id: z
    .string(mustBe('request_id', REQUEST_ID))
    .regex(REQUEST_ID_RE, mustBe('request_id', REQUEST_ID))
    .optional(),
});
export type RunCommandInput = z.infer<typeof runCommandInputSchema>;

/** Validates `run_command_wait`'s arguments (contract 3.1); exported for the fuzz tests. */
export const parseRunInput = (args: Record<string, unknown>) =>
  parseInput(RUN_COMMAND_TOOL, runCommandInputSchema, args);

export class CatalogSource implements Source {
  readonly kind = 'run_command_wait';
  readonly executor: Executor;
  readonly listingSchema: ListingSchema = {
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
    },
    required: ['commands'],
  };
  readonly #catalog: Catalog;

  constructor(catalog: Catalog, executor: Executor) {
    this.#catalog = catalog;
    this.executor = executor;
  }

  tools(): readonly Tool[] {
    return [RUN_COMMAND_TOOL];
  }

  /** Contract 17: a reload's catalog checks the requests from now on. */
  reload(config: Config): void {
    this.#catalog.reload(config);
  }

  /** Contract 3.1: the catalog only (ogf.cue has its own tool). */
  listing(): SourceListing {
    const commands = this.#catalog.list();
    const names = commands.map((c) => c.name).join(', ') || 'none';
    return { fields: { commands }, summary: `${commands.length} catalog command(s): ${names}` };
  }

  prepare(_name: string, args: Record<string, unknown>, client: string): Prepared {
    const input = parseRunInput(args);
    if (!input.ok) return { kind: 'refuse', code: 'InvalidArguments', message: input.message };
    const { command, justification, request_id, wait_seconds } = input.value;
    const prepared = this.#catalog.prepare(command, input.value.args, client);
    if (!prepared.ok) return { kind: 'refuse', code: prepared.code, message: prepared.message };
    const request = { ...prepared.request };
    if (justification !== undefined) request.justification = justification;
    if (request_id === undefined) return { kind: 'submit', request, waitSeconds: wait_seconds };
    request.request_id = request_id;
    return {
      kind: 'submit',
      request,
      waitSeconds: wait_seconds,
      requestIdReused: `request_id must be new, or repeat its first request exactly (same command, args and justification), got ${JSON.stringify(request_id)}, already used by this client for a different request`,
    };
  }
}
