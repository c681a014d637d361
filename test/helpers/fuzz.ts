/**
 * Generators of hostile input for the fuzz suites (issue 6 item 4): wrong types, huge strings, deep
 * nesting, lone surrogates and control characters, prototype keys (`__proto__`, `constructor`), and
 * numbers JSON cannot carry. Plus small oracles written from contracts.md alone, so a fuzz test can say
 * what the product must accept without asking the product.
 */
import fc from 'fast-check';
import { beforeEach, onTestFailed } from 'vitest';

/** Objects carrying prototype keys as own properties, the way JSON.parse makes them. */
export const PROTO_OBJECTS: unknown[] = [
  JSON.parse('{"__proto__":{"polluted":true}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
  JSON.parse('{"__proto__":null,"toString":"x","hasOwnProperty":1}'),
  JSON.parse('{"valueOf":{},"__defineGetter__":[]}'),
];

/** Nested arrays/objects `depth` levels deep. */
export function deep(depth: number, kind: 'array' | 'object' = 'array'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

/** Strings a validator must not choke on: lone surrogates, controls, bidi overrides, NUL, huge. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\ud800',
    'a\udfffb',
    '\u0000',
    '\u0007bell',
    '\u007f',
    '\u0085next-line',
    '\u202eevil',
    '$(id)',
    '`id`',
    '; rm -rf /',
    '../../etc/passwd',
    '{text}',
    '%s%n',
    '\\',
    '"',
    '',
    ' ',
    '__proto__',
    'constructor',
  ),
  fc.integer({ min: 1, max: 5 }).map((n) => 'x'.repeat(n * 20_000)),
);

/** Any hostile JSON-able value (finite numbers only: over JSON, NaN and Infinity arrive as null). */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  nastyString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    true,
    false,
    null,
    0,
    -0,
    1,
    -1,
    0.5,
    2 ** 53,
    1e308,
    -1e-308,
    [],
    {},
    [1, 2],
    ...PROTO_OBJECTS,
  ),
  fc.integer({ min: 50, max: 400 }).map((d) => deep(d)),
  fc.integer({ min: 50, max: 400 }).map((d) => deep(d, 'object')),
);

/** Keys that no tool accepts, prototype names included. */
export const strayKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'session', 'SESSION_ID', 'x', ''),
  fc.string({ minLength: 1, maxLength: 12 }),
);

// ---- oracles from contracts.md 3.1–3.3 ------------------------------------------------------------

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: contract 3.3 refuses C0, DEL and C1.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/;
// Justification: newline and tab only, and (v2, contract 3.2) no bidi controls either.
const CONTROLS_BUT_NL_TAB =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const cp = (s: string) => [...s].length;
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export type FieldOracle = Record<string, (v: unknown) => boolean>;

/** What each `ogf_cue` field accepts (contract 3.3); `undefined` means absent (defaults apply). */
export const CUE_FIELDS: FieldOracle = {
  session_id: (v) => typeof v === 'string' && UUID.test(v),
  action: (v) =>
    typeof v === 'string' &&
    ['none', 'wave', 'nod', 'shake_head', 'small_guts_pose', 'celebrate'].includes(v),
  emotion: (v) =>
    typeof v === 'string' &&
    ['neutral', 'happy', 'excited', 'curious', 'surprised', 'concerned', 'sad', 'proud'].includes(v),
  intensity: (v) => isNum(v) && v >= 0 && v <= 1,
  gaze: (v) => typeof v === 'string' && ['neutral', 'user', 'content', 'away'].includes(v),
  ttl_ms: (v) => v === undefined || (Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 10_000),
  message: (v) =>
    v === undefined || v === null || (typeof v === 'string' && cp(v) <= 120 && !CONTROLS.test(v)),
  wait_seconds: (v) => v === undefined || (isNum(v) && v >= 0 && v <= 90),
};

/** `run_command_wait` (contract 3.1) over a catalog holding `echo {word: ^[a-z]+$, <= 20}`. */
export const RUN_FIELDS: FieldOracle = {
  command: (v) => v === 'echo',
  args: (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    const keys = Object.keys(v);
    const word = (v as Record<string, unknown>).word;
    return (
      keys.length === 1 &&
      keys[0] === 'word' &&
      typeof word === 'string' &&
      /^[a-z]+$/.test(word) &&
      cp(word) <= 20
    );
  },
  justification: (v) =>
    v === undefined || (typeof v === 'string' && cp(v) <= 500 && !CONTROLS_BUT_NL_TAB.test(v)),
  wait_seconds: (v) => v === undefined || (isNum(v) && v >= 0 && v <= 90),
  request_id: (v) => v === undefined || (typeof v === 'string' && /^[a-z0-9][a-z0-9_-]{0,31}$/.test(v)),
};

export const PENDING_FIELDS: FieldOracle = {
  pending_id: (v) => typeof v === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(v),
  wait_seconds: (v) => v === undefined || (isNum(v) && v >= 0 && v <= 90),
};

export const VALID_CUE = {
  session_id: '3F2504E0-4F89-41D3-9A0C-0305E82C3301',
  action: 'wave',
  emotion: 'happy',
  intensity: 0.5,
  gaze: 'user',
  ttl_ms: 1500,
  message: 'hi',
  wait_seconds: 0,
};
export const VALID_RUN = { command: 'echo', args: { word: 'hello' }, wait_seconds: 0 };

/** A valid input with some fields replaced by hostile values, some removed, and maybe a stray key. */
export function mutated(
  base: Record<string, unknown>,
  fields: FieldOracle,
): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(fields);
  return fc
    .record({
      replace: fc.subarray(names, { minLength: 0, maxLength: Math.min(3, names.length) }),
      values: fc.array(hostileValue, { minLength: 3, maxLength: 3 }),
      drop: fc.subarray(names, { maxLength: 1 }),
      stray: fc.option(fc.tuple(strayKey, hostileValue), { freq: 4 }),
    })
    .map(({ replace, values, drop, stray }) => {
      // Built by JSON so `__proto__` becomes an own property, as it does for input off the wire.
      const out = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
      replace.forEach((k, i) => {
        Object.defineProperty(out, k, {
          value: values[i],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      });
      for (const k of drop) delete out[k];
      if (stray) {
        Object.defineProperty(out, stray[0], {
          value: stray[1],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    });
}

/** The fields the oracle refuses, plus any key it does not know; empty means the input is valid. */
export function offending(input: Record<string, unknown>, fields: FieldOracle): string[] {
  const bad = Object.keys(input).filter((k) => !Object.hasOwn(fields, k));
  for (const [k, ok] of Object.entries(fields)) {
    const v = Object.hasOwn(input, k) ? input[k] : undefined;
    if (!ok(v)) bad.push(k);
  }
  return bad;
}

/**
 * The seed of every `fc.sample` in the fuzz suites: fresh each run (so runs explore new input), printed
 * so a failure can be replayed exactly with `OGF_FUZZ_SEED=<n> npx vitest run <file>`.
 */
export const FUZZ_SEED = Number(process.env.OGF_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
process.stdout.write(`fuzz seed ${FUZZ_SEED} (replay: OGF_FUZZ_SEED=${FUZZ_SEED})\n`);
// And in each failure's own message, which the run's summary prints at its end: a CI log read from its tail
// showed a fuzz failure without the seed printed when its file began (the NUL in an argv, seed 24).
beforeEach(() => {
  onTestFailed(({ task }) => {
    for (const e of task.result?.errors ?? []) {
      e.message = `${e.message}\n(fuzz seed ${FUZZ_SEED}: replay with OGF_FUZZ_SEED=${FUZZ_SEED})`;
    }
  });
});
