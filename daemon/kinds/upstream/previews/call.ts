/**
 * One preview call through the preview connection (contract 12), and how its answer is read: a tool result
 * of at most 1 MiB of JSON, else the reason it is not, in one sentence of ours (never the content).
 */
import type { Tool } from '@modelcontextprotocol/client';
import { isProtocolError, isSdkError } from '../../../base/index.js';
import type { Preview } from '../../../core/index.js';

/** Contract 12: the most one preview call may answer (JSON of its result), and the proposed content. */
export const PREVIEW_CALL_MAX_BYTES = 1024 * 1024;

/** What one computation may do: call a tool of the upstream, and see what it listed. */
export interface PreviewIo {
  /** Sends one tools/call through the preview connection (bounded by the caller); rejects on failure. */
  call(tool: string, args: Record<string, unknown>): Promise<unknown>;
  /** The tool as the upstream listed it, or undefined. */
  listed(tool: string): Tool | undefined;
  /** The upstream's name, for the words of a failure. */
  upstream: string;
  /** The per-call deadline in seconds, for the words of a failure. */
  timeoutS: number;
}

/** A preview before its time is stamped. */
export type Computed = Omit<Preview, 'computed_at'>;

/** Contract 12: the words of a read error that mean "there is no such file". */
export const NO_FILE_RE = /ENOENT|no such file|does not exist/i;

export function failed(kind: Preview['kind'], error: string): Computed {
  return { kind, status: 'failed', error };
}

/** The first line of a text the upstream wrote, cut to 200 characters, for one sentence of ours. */
export function said(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** The result's text blocks joined, or undefined when it is not a tool result or has no text. */
export function textOf(result: unknown): string | undefined {
  const content = (result as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text);
  return texts.length === 0 ? undefined : texts.join('');
}

/** Why a call failed, in words (never its content). */
function callFailure(e: unknown, io: PreviewIo): string {
  if (isSdkError(e, 'RequestTimeout'))
    return `the upstream ${io.upstream} did not answer the preview call within ${io.timeoutS} s`;
  if (isSdkError(e, 'NotConnected', 'ConnectionClosed'))
    return `the connection to the upstream ${io.upstream} ended before it answered the preview call`;
  if (isProtocolError(e))
    return `the upstream ${io.upstream} answered an error (${e.code}: ${said(e.message)})`;
  return `the upstream ${io.upstream}'s answer to the preview call could not be read (${said((e as Error)?.message ?? String(e))})`;
}

/** One call, its answer checked: a tool result of at most 1 MiB, else the reason it is not. */
export async function callBounded(
  io: PreviewIo,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ ok: true; result: { isError?: unknown } } | { ok: false; why: string }> {
  let result: unknown;
  try {
    result = await io.call(tool, args);
  } catch (e) {
    return { ok: false, why: callFailure(e, io) };
  }
  if (Buffer.byteLength(JSON.stringify(result) ?? '') > PREVIEW_CALL_MAX_BYTES)
    return { ok: false, why: `the upstream ${io.upstream} answered more than 1 MiB to the preview call` };
  if (
    result === null ||
    typeof result !== 'object' ||
    !Array.isArray((result as { content?: unknown }).content)
  )
    return {
      ok: false,
      why: `the upstream ${io.upstream} did not answer the preview call with a tool result`,
    };
  return { ok: true, result: result as { isError?: unknown } };
}
