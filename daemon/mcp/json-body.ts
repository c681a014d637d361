/**
 * An MCP message's JSON text parsed, its own `__proto__` keys renamed: a `/mcp` POST's body, and each line
 * `mcp-stdio` reads (stdio-lines.ts). The SDK's request schema (zod records) silently drops such a key, so a
 * tool call carrying one would be judged as if it were absent; renamed, our own validation sees it and
 * refuses it like any other unknown property (contract 3.1/3.3; found by test/fuzz-mcp). The reviver that
 * renames them costs more than the parse itself (~3.5 µs of a tools/call's ~5 here), so it runs only on a
 * text that can hold such a key.
 */

/** What a `__proto__` key is called once renamed, so the tool's refusal names it readably. */
export const PROTO_KEY = '__proto__ (a prototype key)';

/** JSON.parse reviver: renames own `__proto__` keys (above). */
function keepProtoKeys(_key: string, value: unknown): unknown {
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    !Object.hasOwn(value, '__proto__')
  ) {
    return value;
  }
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(copy, k === '__proto__' ? PROTO_KEY : k, {
      value: v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/**
 * Whether a JSON text can hold a `__proto__` key: one is spelt out in it, or written with a `\u` escape
 * (`"\u005f_proto__"`), the only other way JSON has to write those letters.
 */
function mayHoldProtoKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('\\u');
}

/** `text` parsed as JSON (throws as JSON.parse does), every own `__proto__` key renamed PROTO_KEY. */
export function parseJsonBody(text: string): unknown {
  return mayHoldProtoKey(text) ? JSON.parse(text, keepProtoKeys) : JSON.parse(text);
}

/**
 * A line of JSON with every own `__proto__` key renamed, written again as JSON; the line itself, byte for
 * byte, when it holds none, or is not JSON (whoever parses it next refuses it as it would have).
 */
export function protoKeysRenamed(line: string): string {
  if (!mayHoldProtoKey(line)) return line;
  let renamed = false;
  try {
    const value: unknown = JSON.parse(line, (key, v: unknown) => {
      const kept = keepProtoKeys(key, v);
      renamed ||= kept !== v;
      return kept;
    });
    return renamed ? JSON.stringify(value) : line;
  } catch {
    return line;
  }
}
