/**
 * What an upstream's inputSchema may cost the daemon (issue 19 finding 4: a hostile upstream must never
 * make the daemon, the owners or the other upstreams wait). Ajv's compiled validators have no clock and
 * no step limit of their own, so the cost is bounded in two places, both deterministic:
 *
 * - Before compiling: the schema is walked once (linear in its size) and refused when it has more than
 *   MAX_SUBSCHEMAS subschemas, MAX_REFS references or MAX_DEPTH levels — the compile's cost grows with both (measured in
 *   schema.test.ts) — or when a reference points into a value that is not a schema (`enum`,
 *   `const`, `default`, …), which Ajv would compile as a schema the walk never saw.
 * - While validating: the walk gives every subschema a keyword `x-ogf-cost` (its weight: 1 plus its own
 *   keywords' size), which Ajv calls at each evaluation of that subschema; the call adds the weight (plus
 *   the string's or object's size where that subschema's keywords scan it) to a counter, and past
 *   VALIDATION_BUDGET it throws, so the call is refused naming the value it was at. Without it, 26
 *   definitions each applying the next twice evaluated one value 2^26 times (~50 s).
 *
 * `uniqueItems` is replaced by `x-ogf-unique`, checked by hashing each item's canonical JSON (keys sorted)
 * in linear time: Ajv compares every pair of non-primitive items (~19 s for 20,000 objects).
 * Nothing here changes what a schema accepts, only what checking it may cost.
 */

/** A schema with more subschemas than this is not compiled (its tool is not exposed). */
export const MAX_SUBSCHEMAS = 500;
/** A schema with more `$ref`/`$dynamicRef`/`$recursiveRef` than this is not compiled. */
export const MAX_REFS = 128;
/** A schema nested deeper than this (JSON levels) is not compiled: Ajv's compile recurses per level. */
export const MAX_DEPTH = 64;
/** Weighted steps one call's arguments may take to check (about 0.1 s of Ajv's work at worst). */
export const VALIDATION_BUDGET = 250_000;

import { MAX_SCHEMA_PATTERN_INSTRUCTIONS, patternSize } from './re2-pattern.js';

export const COST_KEYWORD = 'x-ogf-cost';
export const UNIQUE_KEYWORD = 'x-ogf-unique';

/** Keywords whose value is one subschema. */
const ONE = new Set([
  'not',
  'if',
  'then',
  'else',
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
/** Keywords whose value is an array of subschemas (`items` in draft-07's tuple form too). */
const MANY = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas (`dependencies` also to arrays of names). */
const MAP = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);
/**
 * Keywords whose value is data (compared, never applied) or names: copied as they are, and a reference
 * into them is refused (Ajv would compile what it points at as a schema the walk never counted).
 */
const DATA = new Set([
  'enum',
  'const',
  'default',
  'examples',
  'dependentRequired',
  'discriminator',
  '$vocabulary',
]);
const REF = new Set(['$ref', '$dynamicRef', '$recursiveRef']);
/** Keywords whose check reads every character of a string value (and `pattern`, see Cost). */
const SCANS_STRING = new Set(['minLength', 'maxLength']);
/** Keywords whose check reads every key of an object value. */
const SCANS_OBJECT = new Set([
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'unevaluatedProperties',
  'minProperties',
  'maxProperties',
]);

/**
 * The weight of one evaluation of a subschema, and what else its keywords read: `s`, each character of a
 * string value, at `s`/2048 steps; `k`, each key of an object value, `k` steps (more when it is
 * compared with many declared properties); `o`, each character of each key, at `o`/2048 steps. The
 * subschema's own keywords (an `enum`, a `required` list, declared properties) weigh a step per 64
 * characters of JSON in `w`. A step is about 0.6 µs of Ajv's work on a busy 2-core machine; RE2
 * (re2js) took about 77 ns per character plus 0.25 ns per character and program instruction, so a
 * pattern adds its instructions + 300 to `s` (or `o` for patternProperties), a length check 16.
 */
export interface Cost {
  w: number;
  s?: number;
  k?: number;
  o?: number;
}

export type Instrumented = { ok: true; schema: Record<string, unknown> } | { ok: false; why: string };

/** Whether a JSON pointer fragment (`#/a/b`) walks through a data keyword, reading names as names. */
function pointsIntoData(ref: string): boolean {
  const hash = ref.indexOf('#/');
  if (hash < 0) return false;
  let parts: string[];
  try {
    parts = ref
      .slice(hash + 2)
      .split('/')
      .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return true; // Ajv would fail to resolve it; refuse rather than guess.
  }
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (DATA.has(part)) return true;
    if (MAP.has(part) || MANY.has(part)) i++; // the next part is a name or an index, not a keyword
  }
  return false;
}

/**
 * Copies `schema` with the cost keywords added, or says why it is refused. The copy is what Ajv compiles;
 * the tool keeps exposing the upstream's own schema.
 */
export function instrument(schema: Record<string, unknown>): Instrumented {
  let subschemas = 0;
  let refs = 0;
  let instructions = 0;
  let refused: string | undefined;
  /** A pattern's RE2 program size, counted against the schema's total. */
  const sized = (pattern: string): number => {
    if (refused !== undefined) return 0;
    const n = patternSize(pattern);
    instructions += n;
    if (instructions > MAX_SCHEMA_PATTERN_INSTRUCTIONS)
      refused = `its inputSchema's patterns compile to more than ${MAX_SCHEMA_PATTERN_INSTRUCTIONS} RE2 instructions in all`;
    return n;
  };

  const copy = (node: unknown, depth: number): unknown => {
    if (refused !== undefined || node === null || typeof node !== 'object') return node;
    if (depth > MAX_DEPTH) {
      refused = `its inputSchema is nested deeper than ${MAX_DEPTH} levels`;
      return node;
    }
    if (Array.isArray(node)) return node.map((v) => copy(v, depth + 1));
    if (++subschemas > MAX_SUBSCHEMAS) {
      refused = `its inputSchema has more than ${MAX_SUBSCHEMAS} subschemas`;
      return node;
    }
    const out: Record<string, unknown> = {};
    const cost: Cost = { w: 1 };
    let own = 0;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (key === COST_KEYWORD || key === UNIQUE_KEYWORD) continue;
      if (REF.has(key) && typeof value === 'string') {
        if (++refs > MAX_REFS) refused ??= `its inputSchema has more than ${MAX_REFS} $refs`;
        if (pointsIntoData(value))
          refused ??= `its inputSchema has a ${key} into a value that is not a schema (${[...DATA].join(', ')}): ${JSON.stringify(value.slice(0, 200))}`;
      }
      if (SCANS_STRING.has(key)) cost.s = (cost.s ?? 0) + 16;
      if (SCANS_OBJECT.has(key)) cost.k = 1;
      // Ajv loops over the declared names at each evaluation, and per key of the value when it also
      // checks for additional properties.
      if (MAP.has(key) && value !== null && typeof value === 'object') own += 8 * Object.keys(value).length;
      if (key === 'pattern' && typeof value === 'string') cost.s = (cost.s ?? 0) + sized(value) + 300;
      if (key === 'patternProperties' && value !== null && typeof value === 'object')
        for (const p of Object.keys(value)) cost.o = (cost.o ?? 0) + sized(p) + 300;
      if (key === 'uniqueItems') {
        if (value === true) out[UNIQUE_KEYWORD] = true;
        continue;
      }
      if (DATA.has(key)) {
        out[key] = value;
        own += JSON.stringify(value)?.length ?? 0;
      } else if (MAP.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v, depth + 2)]));
      } else if (ONE.has(key) || MANY.has(key) || typeof value === 'object') {
        // Unknown keywords' objects too: Ajv compiles whatever a reference points at as a schema.
        out[key] = copy(value, depth + 1);
        // A list of names or types (`required`, `type`) is read at each evaluation.
        if (Array.isArray(value) && !MANY.has(key)) own += JSON.stringify(value).length;
      } else {
        out[key] = value;
        own += typeof value === 'string' ? value.length : 8;
      }
    }
    cost.w += own >> 6;
    if (cost.k !== undefined) {
      const declared = node as { properties?: unknown };
      const names =
        declared.properties !== null && typeof declared.properties === 'object'
          ? Object.keys(declared.properties).length
          : 0;
      cost.k += names >> 6;
    }
    out[COST_KEYWORD] = cost;
    return out;
  };

  const result = copy(schema, 1) as Record<string, unknown>;
  return refused === undefined ? { ok: true, schema: result } : { ok: false, why: refused };
}

/** Thrown by the cost keyword past the budget; ends the validation at once (Ajv does not catch it). */
export class OverBudget extends Error {
  /** `path`: Ajv's instancePath of the value being checked (`/x/0`). */
  constructor(readonly path: string) {
    super(`data${path} needs more than ${VALIDATION_BUDGET} steps to check against the inputSchema`);
  }
}

let steps = 0;

/** Starts one call's count; validation is synchronous, so one counter serves every schema. */
export function resetSteps(): void {
  steps = 0;
}

function charge(n: number, path: string): void {
  steps += n;
  if (steps > VALIDATION_BUDGET) throw new OverBudget(path);
}

interface DataCxt {
  instancePath: string;
}

/** The `x-ogf-cost` keyword: counts one evaluation of a subschema. */
export function costKeyword(cost: Cost, data: unknown, _parent: unknown, cxt: DataCxt): boolean {
  let n = cost.w;
  if (cost.s !== undefined && typeof data === 'string') n += Math.ceil((data.length * cost.s) / 2048);
  if (cost.k !== undefined && data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const o = cost.o ?? 0;
    for (const key in data) n += cost.k + Math.ceil((key.length * o) / 2048);
  }
  charge(n, cxt.instancePath);
  return true;
}

/** JSON Schema's equality as a string: keys sorted, so `{a,b}` equals `{b,a}`; 1 and 1.0 are one number. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

interface UniqueError {
  keyword: string;
  message: string;
  params: { i: number; j: number };
}

/** The `x-ogf-unique` keyword: `uniqueItems: true` in linear time, with Ajv's own message. */
export function uniqueKeyword(
  this: unknown,
  _schema: boolean,
  data: unknown,
  _parent: unknown,
  cxt: DataCxt,
): boolean {
  if (!Array.isArray(data)) return true;
  const seen = new Map<string, number>();
  for (let i = 0; i < data.length; i++) {
    const key = canonical(data[i]);
    charge(1 + (key.length >> 6), cxt.instancePath);
    const j = seen.get(key);
    if (j !== undefined) {
      (uniqueKeyword as unknown as { errors: UniqueError[] }).errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(key, i);
  }
  return true;
}
