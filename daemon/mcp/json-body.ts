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

/** The longest a key's token can be and still spell `__proto__`: each letter a `\u` escape, and its quotes. */
const LONGEST_PROTO_TOKEN = 9 * 6 + 2;

/** The index of the `"` that ends the string whose opening quote is at `open`, in a valid JSON text. */
function stringEnd(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * A valid JSON text with each `__proto__` key's token (however it is escaped) replaced by PROTO_KEY's, every
 * other byte as it was. A string token is a key exactly when `:` follows it (JSON allows whitespace between).
 */
function protoKeyTokensRenamed(text: string): string {
  let out = '';
  let from = 0;
  for (let open = text.indexOf('"'); open !== -1; ) {
    const end = stringEnd(text, open);
    let next = end + 1;
    while (' \t\n\r'.includes(text[next] ?? '-')) next++;
    // Decoded only when it may spell the name: it begins with `_` or an escape (`\u005f`), and is short enough.
    const first = text.charCodeAt(open + 1);
    if (
      text[next] === ':' &&
      (first === 0x5f || first === 0x5c) &&
      end + 1 - open <= LONGEST_PROTO_TOKEN &&
      JSON.parse(text.slice(open, end + 1)) === '__proto__'
    ) {
      out += `${text.slice(from, open)}${JSON.stringify(PROTO_KEY)}`;
      from = end + 1;
    }
    open = text.indexOf('"', end + 1);
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * A line of JSON with every own `__proto__` key renamed in its text, every other byte as the client wrote it
 * (written again from a parse, `1e400` would become `null` and `1.50` `1.5`); the line itself when it holds
 * none, or is not JSON (whoever parses it next refuses it as it would have).
 */
export function protoKeysRenamed(line: string): string {
  if (!mayHoldProtoKey(line)) return line;
  try {
    JSON.parse(line);
  } catch {
    return line;
  }
  return protoKeyTokensRenamed(line);
}
