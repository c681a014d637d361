/**
 * Compiles one upstream tool's `inputSchema` into the validator its calls are checked with (contract 7:
 * "a call is validated against the upstream's inputSchema"). The engines are the SDK's own Ajv classes
 * with its own options, per declared dialect (none or 2020-12, 2019-09, draft-07/06; any other is
 * refused), with two differences that close two holes:
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
import { Ajv, AjvJsonSchemaValidator, addFormats } from '@modelcontextprotocol/server/validators/ajv';
import { RE2JS } from 're2js';

export type Validate = (input: unknown) => { valid: boolean; errorMessage?: string | undefined };
export type CompiledSchema = { ok: true; validate: Validate } | { ok: false; why: string };

interface AjvError {
  instancePath: string;
  message?: string;
}
interface Engine {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: AjvError[] | null };
  errorsText(errors?: AjvError[] | null): string;
}
type EngineClass = new (options: Record<string, unknown>) => Engine;
type Dialect = '2020-12' | '2019-09' | 'draft-7';

/** The SDK's default engine options (createDefaultAjvInstance in @modelcontextprotocol/core-internal). */
const SDK_OPTIONS = { strict: false, validateFormats: true, validateSchema: false, allErrors: true };

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
 * as the SDK's). Reached through its (TypeScript-private) lazy engines; upstream-schema.test.ts fails at
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

/** A pattern RE2 refused, with the reason (thrown from inside Ajv's compile). */
class UnsupportedPattern extends Error {}

/**
 * Ajv's `code.regExp` hook: `pattern` → an object with `test`, searched (unanchored, as JSON Schema
 * means) by RE2. `toString` must be unique per pattern: Ajv shares compiled patterns by it.
 */
function re2RegExp(pattern: string): { test(value: string): boolean; toString(): string } {
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (e) {
    const detail = (e as Error).message.replace(/^error parsing regexp: /, '').slice(0, 200);
    throw new UnsupportedPattern(
      `its inputSchema has a pattern RE2 cannot compile (linear-time matching: no backreferences or lookaround): ${JSON.stringify(pattern.slice(0, 200))} (${detail})`,
    );
  }
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
  const Engine = engineClasses()[dialect];
  const engine = new Engine({ ...SDK_OPTIONS, code: { regExp: re2RegExp } });
  addFormats(engine as never);
  let check: ReturnType<Engine['compile']>;
  try {
    check = engine.compile(schema);
  } catch (e) {
    if (e instanceof UnsupportedPattern) return { ok: false, why: e.message };
    return { ok: false, why: `its inputSchema does not compile: ${(e as Error).message.slice(0, 300)}` };
  }
  // errorsText only formats; one engine does it for every tool, so each tool keeps only its function.
  formatter ??= new (engineClasses()['2020-12'])(SDK_OPTIONS);
  const text = formatter;
  return {
    ok: true,
    validate: (input) =>
      check(input) ? { valid: true } : { valid: false, errorMessage: text.errorsText(check.errors) },
  };
}
