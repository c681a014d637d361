/**
 * Input validation in the product rather than the SDK (contract 3.2): every refusal is one line
 * `InvalidArguments: <field> must be <accepts>, got <what came>`, and any property a tool does not publish
 * is refused. `parseInput` serves every tool that has a zod schema (the sources' own tools use it too);
 * the schemas here are the edge's lifecycle tools'.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { describeInput, mustBe } from '../../common/field-errors.js';
import { AWAIT_TOOL, CANCEL_TOOL, listCommandsTool, WAIT_DEFAULT_S } from './schemas.js';

const PENDING_ID_RE = /^[A-Za-z0-9_-]{8,64}$/;
const PENDING_ID = 'a pending_id matching ^[A-Za-z0-9_-]{8,64}$';

const WAIT = 'a number from 0 to 90 (seconds)';
/** `wait_seconds` with its default (contract 3.1: 0..90, default 50). */
export const waitSeconds = z
  .number(mustBe('wait_seconds', WAIT))
  .min(0, mustBe('wait_seconds', WAIT))
  .max(90, mustBe('wait_seconds', WAIT))
  .default(WAIT_DEFAULT_S);

const pendingIdSchema = z
  .string(mustBe('pending_id', PENDING_ID))
  .regex(PENDING_ID_RE, mustBe('pending_id', PENDING_ID));

export const awaitInputSchema = z.strictObject({ pending_id: pendingIdSchema, wait_seconds: waitSeconds });
export const cancelInputSchema = z.strictObject({ pending_id: pendingIdSchema });
export const listInputSchema = z.strictObject({});

export type AwaitInput = z.infer<typeof awaitInputSchema>;
export type CancelInput = z.infer<typeof cancelInputSchema>;

function accepted(tool: Tool): string {
  const names = Object.keys(tool.inputSchema.properties ?? {});
  return names.length === 0
    ? `${tool.name} takes no properties`
    : `${tool.name} accepts only ${names.join(', ')}`;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Validates a tool's arguments against its zod schema. On refusal, `message` is the one-line text after
 * `InvalidArguments: `: the first offending field, what it accepts, and what came (never the value
 * itself: it may be a secret). `tool` is the published definition, whose properties the message lists.
 */
export function parseInput<T>(tool: Tool, schema: z.ZodType<T>, args: Record<string, unknown>): Parsed<T> {
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
  return { ok: false, message: issue?.message ?? `arguments must match the ${tool.name} input schema` };
}

export const parseAwaitInput = (args: Record<string, unknown>) =>
  parseInput(AWAIT_TOOL, awaitInputSchema, args);
export const parseCancelInput = (args: Record<string, unknown>) =>
  parseInput(CANCEL_TOOL, cancelInputSchema, args);
export const parseListInput = (args: Record<string, unknown>) =>
  parseInput(listCommandsTool([]), listInputSchema, args);
