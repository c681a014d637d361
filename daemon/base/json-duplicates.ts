/**
 * Finds a key named twice in one JSON object (contract 1.3: "a config that names ... an upstream twice is
 * refused like any bad config"). `JSON.parse` silently keeps the last of two equal keys, so a config with
 * two `upstreams.notes` entries would start with one of them and say nothing; this scanner reads the raw
 * text instead. Keys are compared as JSON.parse decodes them (`"a"` and `"\u0061"` are the same key).
 *
 * A single pass over the text, with an explicit stack (no recursion, so nesting depth cannot overflow the
 * call stack), in time linear in its length. It expects text `JSON.parse` accepted; on anything else it
 * returns undefined rather than guess (the caller already refused invalid JSON).
 */

interface ObjectFrame {
  kind: 'object';
  /** How its parent reaches it (`.key`, `[3]`); '' at the top. Paths are built only for the answer. */
  segment: string;
  keys: Set<string>;
  /** The key whose value comes next, once read. */
  key: string | undefined;
}

interface ArrayFrame {
  kind: 'array';
  segment: string;
  index: number;
}

type Frame = ObjectFrame | ArrayFrame;

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
const MAX_KEY_SHOWN = 200;
/** The answer is one line of an error message: a path deeper than this keeps its deepest end. */
const MAX_PATH_SHOWN = 1000;

/** `.b`, `[3]`, or `["odd key"]` for a key that is not a plain name (always one line, bounded). */
function childSegment(frame: Frame): string {
  if (frame.kind === 'array') return `[${frame.index}]`;
  const key = frame.key ?? '';
  if (PLAIN_KEY.test(key)) return `.${key}`;
  const shown = key.length > MAX_KEY_SHOWN ? `${key.slice(0, MAX_KEY_SHOWN)}…` : key;
  return `[${JSON.stringify(shown)}]`;
}

/** `upstreams.notes` for the key `top.key` of the innermost object of `stack`. */
function pathOf(stack: readonly Frame[], top: Frame): string {
  let path = '';
  for (const f of stack) path += f.segment;
  path = (path + childSegment(top)).replace(/^\./, '');
  return path.length > MAX_PATH_SHOWN ? `…${path.slice(-MAX_PATH_SHOWN)}` : path;
}

/** The index just past the string starting at `start` (a `"`), or -1 when it never ends. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22 /* " */) return i + 1;
  }
  return -1;
}

/**
 * The path of the first key that one object of `text` names twice (`upstreams.notes`,
 * `grants[1].command`), or undefined when every object's keys are distinct.
 */
export function duplicateKeyPath(text: string): string | undefined {
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const top = stack.at(-1);
    switch (c) {
      case '{':
      case '[': {
        const segment = top === undefined ? '' : childSegment(top);
        stack.push(
          c === '{'
            ? { kind: 'object', segment, keys: new Set(), key: undefined }
            : { kind: 'array', segment, index: 0 },
        );
        i++;
        break;
      }
      case '}':
      case ']':
        stack.pop();
        i++;
        break;
      case ',':
        if (top?.kind === 'array') top.index++;
        else if (top?.kind === 'object') top.key = undefined;
        i++;
        break;
      case '"': {
        const end = stringEnd(text, i);
        if (end < 0) return undefined;
        if (top?.kind === 'object' && top.key === undefined) {
          let key: string;
          try {
            key = JSON.parse(text.slice(i, end)) as string;
          } catch {
            return undefined;
          }
          top.key = key;
          if (top.keys.has(key)) return pathOf(stack, top);
          top.keys.add(key);
        }
        i = end;
        break;
      }
      default:
        // Whitespace, ':', numbers, true / false / null: nothing to track.
        i++;
    }
  }
  return undefined;
}
