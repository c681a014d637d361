/**
 * Compiles one upstream tool's `inputSchema` into the validator its calls are checked with (contract 7:
 * "a call is validated against the upstream's inputSchema"). The engines are the SDK's own Ajv classes
 * with its own options, per declared dialect (none or 2020-12, 2019-09, draft-07/06; any other is
 * refused), with these differences, each closing a hole:
 *
 * - Every `pattern` and `patternProperties` key is matched by RE2 (re2js), in time linear in the value.
 *   Ajv's default is JavaScript's backtracking RegExp, so an upstream's `^(a+)+$` and one 41-character
 *   argument the AI chose held the daemon's event loop for ever (test/attack-upstream-schemas). A pattern
 *   RE2 cannot compile (backreferences, lookaround) makes the schema fail to compile, and the tool is not
 *   exposed (logged `upstream_tool_skipped` with the reason) — never run on the backtracking engine.
 *   ECMA-262 syntax is translated first (`\u00e9`, named groups); RE2's classes are ASCII (`\s`, `\w`),
 *   so a value may be judged slightly differently than the upstream would — the upstream checks again.
 * - Each tool's schema is compiled by an engine of its own. The SDK's validator kept one engine and looked
 *   a schema up by its `$id` before compiling it, so the second schema with an `$id` already seen (another
 *   tool's or another upstream's) was validated as the first. An engine per tool also lets a refreshed
 *   tool list drop the old schemas instead of keeping them compiled for ever. (About 1 ms per tool, once:
 *   a tool whose inputSchema did not change keeps its validator.)
 *
 * Validation never changes the arguments (no defaults, coercion or removal): the owner approves exactly
 * the JSON that is sent (rule 1).
 */
import { Ajv, AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { clearPatternCache, compilePattern, UnsupportedPattern } from './re2-pattern.js';
import {
  COST_KEYWORD,
  costKeyword,
  instrument,
  OverBudget,
  resetSteps,
  UNIQUE_KEYWORD,
  uniqueKeyword,
} from './schema-cost.js';

export type Validate = (input: unknown) => { valid: boolean; errorMessage?: string | undefined };
export type CompiledSchema = { ok: true; validate: Validate } | { ok: false; why: string };

interface AjvError {
  instancePath: string;
  message?: string;
}
interface Engine {
  addKeyword(definition: Record<string, unknown>): unknown;
  compile(schema: object): ((data: unknown) => boolean) & { errors?: AjvError[] | null };
  errorsText(errors?: AjvError[] | null): string;
}
type EngineClass = new (options: Record<string, unknown>) => Engine;
type Dialect = '2020-12' | '2019-09' | 'draft-7';

/** The SDK's default engine options (createDefaultAjvInstance in @modelcontextprotocol/core-internal). */
const SDK_OPTIONS = { strict: false, validateFormats: true, validateSchema: false, allErrors: true };
/**
 * Ours (issue 19 finding 4): no `$ref` inlining — Ajv copies a referenced schema into every place that
 * refers to it, so 250 refs to a 250-property definition (13 KB) took 14 s and 1 GB to compile; now each
 * is one function, called. `format` is an annotation, as JSON Schema 2020-12 defines it by default:
 * ajv-formats checks `url` with a backtracking RegExp (18 s for 150 KB of ':'). And the first error
 * only: the refusal names one field, and collecting all of them cost more than the check (an item
 * missing 5,000 required names made 5,000 errors; 296 such items took 3.5 s).
 */
const ENGINE_OPTIONS = { ...SDK_OPTIONS, validateFormats: false, inlineRefs: false, allErrors: false };

/** The `$schema` URIs per dialect, as the SDK's `declaredDialect` reads them (http or https, no `#`). */
const DIALECTS: Record<string, Dialect> = {
  'json-schema.org/draft/2020-12/schema': '2020-12',
  'json-schema.org/draft/2019-09/schema': '2019-09',
  'json-schema.org/draft-07/schema': 'draft-7',
  'json-schema.org/draft-06/schema': 'draft-7',
};

function dialectOf(schema: Record<string, unknown>): Dialect | undefined {
  const declared = schema.$schema;
  if (typeof declared !== 'string') return '2020-12';
  return DIALECTS[declared.replace(/#$/, '').replace(/^https?:\/\//, '')];
}

let classes: Record<Dialect, EngineClass> | undefined;

/**
 * The SDK bundles Ajv and exports only the draft-07 class; the 2020-12 and 2019-09 classes are those of
 * the engines its own validator builds (so we need no copy of Ajv of our own, and dialects behave exactly
 * as the SDK's). Reached through its (TypeScript-private) lazy engines; schema.test.ts fails at
 * once if an SDK upgrade moves them.
 */
function engineClasses(): Record<Dialect, EngineClass> {
  if (classes !== undefined) return classes;
  const sdk = new AjvJsonSchemaValidator() as unknown as {
    ajv: object;
    _engineFor(schema: object): object;
  };
  classes = {
    '2020-12': sdk.ajv.constructor as EngineClass,
    '2019-09': sdk._engineFor({ $schema: 'https://json-schema.org/draft/2019-09/schema' })
      .constructor as EngineClass,
    'draft-7': Ajv as unknown as EngineClass,
  };
  return classes;
}

/**
 * Ajv's `code.regExp` hook: `pattern` → an object with `test`, searched (unanchored, as JSON Schema
 * means) by RE2. `toString` must be unique per pattern: Ajv shares compiled patterns by it.
 */
function re2RegExp(pattern: string): { test(value: string): boolean; toString(): string } {
  const re = compilePattern(pattern);
  return { test: (value) => re.test(value), toString: () => `re2:${JSON.stringify(pattern)}` };
}
// Only read when generating standalone code (never here); anything but "new RegExp", which would bypass us.
re2RegExp.code = 'ogf-broker/re2RegExp';

let formatter: Engine | undefined;

/** Compiles `schema` on an engine of its own; `why` says what refused it (for upstream_tool_skipped). */
export function compileInputSchema(schema: Record<string, unknown>): CompiledSchema {
  const dialect = dialectOf(schema);
  if (dialect === undefined) {
    return {
      ok: false,
      why: `its inputSchema declares a dialect the validator does not support ("$schema": ${JSON.stringify(String(schema.$schema).slice(0, 200))}; supported: 2020-12, 2019-09, draft-07, draft-06)`,
    };
  }
  try {
    return compileBounded(schema, dialect);
  } finally {
    clearPatternCache();
  }
}

function compileBounded(schema: Record<string, unknown>, dialect: Dialect): CompiledSchema {
  const instrumented = instrument(schema);
  if (!instrumented.ok) return instrumented;
  const Engine = engineClasses()[dialect];
  const engine = new Engine({ ...ENGINE_OPTIONS, code: { regExp: re2RegExp } });
  engine.addKeyword({ keyword: COST_KEYWORD, schemaType: 'object', errors: false, validate: costKeyword });
  engine.addKeyword({
    keyword: UNIQUE_KEYWORD,
    type: 'array',
    schemaType: 'boolean',
    validate: uniqueKeyword,
  });
  let check: ReturnType<Engine['compile']>;
  try {
    check = engine.compile(instrumented.schema);
  } catch (e) {
    if (e instanceof UnsupportedPattern) return { ok: false, why: e.message };
    return { ok: false, why: `its inputSchema does not compile: ${(e as Error).message.slice(0, 300)}` };
  }
  // errorsText only formats; one engine does it for every tool, so each tool keeps only its function.
  formatter ??= new (engineClasses()['2020-12'])(SDK_OPTIONS);
  const text = formatter;
  return {
    ok: true,
    validate: (input) => {
      resetSteps();
      try {
        if (check(input)) return { valid: true };
      } catch (e) {
        if (e instanceof OverBudget)
          return { valid: false, errorMessage: `${e.message} (the validation budget)` };
        // A stack overflow on deeply nested arguments: refused, never thrown at the caller.
        return {
          valid: false,
          errorMessage: `data could not be checked: ${(e as Error).message.slice(0, 200)}`,
        };
      }
      return { valid: false, errorMessage: text.errorsText(check.errors) };
    },
  };
}
