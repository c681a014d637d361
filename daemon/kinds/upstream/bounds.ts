/**
 * Bounds on an upstream call's arguments, checked before its schema (issue 19 finding 1). An upstream's
 * inputSchema usually admits extra properties of any shape, and every argument is shown to the owner and
 * kept in the snapshot's newest finals: a value nested 2,600 deep is 5 KB on the wire but ~13.5 M
 * characters pretty-printed, and 150 of them crashed the owner's tab on every reload. No tool needs such
 * nesting, so the daemon refuses it at the door (contract 3.2: `InvalidArguments` naming the field and the
 * limit, nothing queued); the panel renders what passes in bounded work anyway (owner-ui/panel/arg-view.ts).
 */
import { escapeForTerminal } from '../../base/index.js';

/** The deepest an argument may nest arrays and objects: `{"a": [[1]]}`'s `a` nests 2. */
export const MAX_ARG_DEPTH = 32;
/**
 * The most characters of JSON an upstream call's arguments may hold (1 MiB): the MCP request size limit
 * (`MAX_BODY_BYTES` of ../mcp/http.ts: `/mcp` answers 413 past it, and `mcp-stdio` relays over `/mcp`),
 * stated again here so the bound holds whatever the transport.
 */
export const MAX_ARGS_JSON_CHARS = 1024 * 1024;

/** A key as one path segment of a refusal: escaped (the AI's own text, one line) and cut to 64 characters. */
function segment(key: string): string {
  const shown = escapeForTerminal(key);
  return shown.length > 64 ? `${shown.slice(0, 64)}…` : shown;
}

/**
 * The path to the first array or object nested deeper than MAX_ARG_DEPTH inside `value` (which sits at
 * `path`, nesting `depth` levels already), or undefined. Recursion stops at the limit, so any depth costs
 * at most MAX_ARG_DEPTH frames.
 */
function tooDeep(value: unknown, path: string[], depth: number): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (depth === MAX_ARG_DEPTH) return path;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [k, v] of entries) {
    const found = tooDeep(v, [...path, segment(String(k))], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The refusal message for `args` (without the `InvalidArguments: ` code), or undefined when within bounds. */
export function argumentBoundsError(args: Record<string, unknown>): string | undefined {
  for (const [k, v] of Object.entries(args)) {
    const path = tooDeep(v, [segment(k)], 0);
    if (path !== undefined)
      return `${segment(k)} must nest at most ${MAX_ARG_DEPTH} levels of arrays and objects, got deeper at ${path.join('.')}`;
  }
  // Depth is bounded now, so stringifying cannot overflow the stack.
  const size = JSON.stringify(args).length;
  if (size <= MAX_ARGS_JSON_CHARS) return undefined;
  let largest = '';
  let largestSize = -1;
  for (const [k, v] of Object.entries(args)) {
    const n = JSON.stringify(v)?.length ?? 0;
    if (n > largestSize) [largest, largestSize] = [k, n];
  }
  return `arguments must be at most ${MAX_ARGS_JSON_CHARS} characters of JSON, got ${size} (${segment(largest)} alone is ${largestSize})`;
}
