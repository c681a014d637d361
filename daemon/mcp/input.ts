/**
 * Input validation for the five tools, in the product rather than the SDK (contract 3.2): every refusal is
 * one line `InvalidArguments: <field> must be <accepts>, got <what came>`, and any property a tool does not
 * publish is refused. `ogf_cue` uses the shared cue schema (bridge-client/protocol.ts) exactly.
 */
import { z } from 'zod';
import {
  describeInput,
  mustBe,
  type OgfCueInput,
  ogfCueInputSchema,
  waitSecondsSchema,
} from '../../bridge-client/protocol.js';
import { charactersAccepted, hasForbiddenCharacter } from '../text-rules.js';
import { JUSTIFICATION_MAX, REQUEST_ID_PATTERN, TOOLS, type ToolName, WAIT_DEFAULT_S } from './schemas.js';

const REQUEST_ID_RE = new RegExp(REQUEST_ID_PATTERN);
const PENDING_ID_RE = /^[A-Za-z0-9_-]{8,64}$/;

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
const PENDING_ID = 'a pending_id matching ^[A-Za-z0-9_-]{8,64}$';

const waitSeconds = waitSecondsSchema.default(WAIT_DEFAULT_S);

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

const pendingIdSchema = z
  .string(mustBe('pending_id', PENDING_ID))
  .regex(PENDING_ID_RE, mustBe('pending_id', PENDING_ID));

export const awaitInputSchema = z.strictObject({ pending_id: pendingIdSchema, wait_seconds: waitSeconds });
export const cancelInputSchema = z.strictObject({ pending_id: pendingIdSchema });
export const listInputSchema = z.strictObject({});

export type AwaitInput = z.infer<typeof awaitInputSchema>;
export type CancelInput = z.infer<typeof cancelInputSchema>;

/** The validated input of each tool. */
export interface ToolInputs {
  ogf_cue: OgfCueInput;
  run_command_wait: RunCommandInput;
  await_command_result: AwaitInput;
  cancel_command: CancelInput;
  list_commands: Record<string, never>;
}

const SCHEMAS: { [K in ToolName]: z.ZodType<ToolInputs[K]> } = {
  ogf_cue: ogfCueInputSchema,
  run_command_wait: runCommandInputSchema,
  await_command_result: awaitInputSchema,
  cancel_command: cancelInputSchema,
  list_commands: listInputSchema as z.ZodType<Record<string, never>>,
};

function accepted(tool: ToolName): string {
  const def = TOOLS.find((t) => t.name === tool);
  const names = Object.keys(def?.inputSchema.properties ?? {});
  return names.length === 0 ? `${tool} takes no properties` : `${tool} accepts only ${names.join(', ')}`;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Validates a tool's arguments. On refusal, `message` is the one-line text after `InvalidArguments: `:
 * the first offending field, what it accepts, and what came (never the value itself: it may be a secret).
 */
export function parseToolInput<K extends ToolName>(
  tool: K,
  args: Record<string, unknown>,
): Parsed<ToolInputs[K]> {
  const schema = SCHEMAS[tool];
  const parsed = schema.safeParse(args);
  if (parsed.success) return { ok: true, value: parsed.data };
  // Refuse unknown properties before anything else: they usually mean the caller read another schema.
  const unknown = parsed.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys' && unknown.path.length === 0) {
    const key = unknown.keys[0] ?? '?';
    return {
      ok: false,
      message: `${key} must be absent (${accepted(tool)}), got ${describeInput(args[key])}`,
    };
  }
  const issue = parsed.error.issues[0];
  return { ok: false, message: issue?.message ?? `arguments must match the ${tool} input schema` };
}
