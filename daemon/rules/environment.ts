/**
 * The CEL environment of rules and `when` grants (contracts.md 11), built once: the variables a rule may read,
 * typed, so an unknown name, an unknown function or a non-boolean expression is refused when the config is
 * loaded (or the grant made), never discovered on a request; CEL's standard functions with `matches` on RE2
 * (re2-matches.ts); and `path_under` (path-under.ts).
 *
 * CEL itself bounds what an expression can do (no loops beyond its macros over the values given, no I/O);
 * the values are the request's, already bounded by the argument limits; the expression is at most
 * MAX_EXPRESSION_CHARS.
 */
import { Environment } from '@marcbachmann/cel-js';
import { type LinkResolver, pathUnder, withLinks } from './path-under.js';
import { RE2_MATCHES, re2Matches } from './re2-matches.js';

/** Contract 11: a `when` is at most this many characters. */
export const MAX_EXPRESSION_CHARS = 4096;

/** What a rule or a `when` grant reads of a request (contract 11). Never a session UUID. */
export interface RuleFacts {
  client: string;
  /** A catalog name, `ogf.cue`, or an exposed upstream name (`notes__write_file`). */
  command: string;
  /** The upstream's name and its own tool name; `""` for other commands. */
  upstream: string;
  tool: string;
  args: Record<string, unknown>;
  /** `""` when absent. */
  justification: string;
  now: Date;
  /**
   * Not a CEL variable: how `path_under` resolves symbolic links for this request — set only when its
   * upstream is a stdio server on this machine (contract 11 v4; facts.ts).
   */
  links?: LinkResolver;
}

/** A compiled expression: `run` answers true, false, or the Error that made it fail (then it is not true). */
export type Compiled = { ok: true; run(facts: RuleFacts): boolean | Error } | { ok: false; why: string };

const env = new Environment({ limits: { maxAstNodes: 2000, maxDepth: 64 } })
  .registerVariable('client', 'string')
  .registerVariable('command', 'string')
  .registerVariable('upstream', 'string')
  .registerVariable('tool', 'string')
  .registerVariable('args', 'map<string, dyn>')
  .registerVariable('justification', 'string')
  .registerVariable('now', 'google.protobuf.Timestamp')
  .registerFunction('path_under(string, string): bool', pathUnder)
  .registerFunction(`string.${RE2_MATCHES}(string): bool`, re2Matches)
  .registerFunction(`${RE2_MATCHES}(string, string): bool`, re2Matches);

/** The library's messages name the renamed function; the owner wrote `matches`. One line, bounded. */
function said(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const first = text.split('\n')[0] ?? '';
  return first.replaceAll(RE2_MATCHES, 'matches').slice(0, 300);
}

/**
 * Every `matches` call of a parsed expression (member `s.matches(p)` and global `matches(s, p)`) renamed to
 * the RE2 one, before the type check binds calls to functions (re2-matches.ts says why). Walks the AST as
 * the library exposes it (`parse(…).ast`: nodes with `op` and `args`; macros keep the same nodes).
 */
function routeMatchesToRe2(node: unknown, seen = new Set<object>()): void {
  if (node === null || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const child of node) routeMatchesToRe2(child, seen);
    return;
  }
  const n = node as { op?: unknown; args?: unknown };
  if (typeof n.op === 'string' && 'args' in n) {
    if ((n.op === 'rcall' || n.op === 'call') && Array.isArray(n.args) && n.args[0] === 'matches') {
      n.args[0] = RE2_MATCHES;
    }
    routeMatchesToRe2(n.args, seen);
    return;
  }
  for (const child of Object.values(n)) routeMatchesToRe2(child, seen);
}

/**
 * Compiles a `when` once: parsed, `matches` routed to RE2, type-checked against the variables above, and
 * required to be boolean. `why` is one line saying what is wrong (the config error names the rule's id).
 */
export function compileExpression(expression: string): Compiled {
  if (expression.length > MAX_EXPRESSION_CHARS) {
    return { ok: false, why: `is ${expression.length} characters; at most ${MAX_EXPRESSION_CHARS}` };
  }
  if (expression.trim() === '') return { ok: false, why: 'is empty; write a CEL expression' };
  let parsed: ReturnType<typeof env.parse>;
  try {
    parsed = env.parse(expression);
  } catch (e) {
    return { ok: false, why: `does not compile: ${said(e)}` };
  }
  routeMatchesToRe2(parsed.ast);
  const checked = parsed.check();
  if (!checked.valid) return { ok: false, why: `does not type-check: ${said(checked.error)}` };
  if (checked.type !== 'bool') {
    return {
      ok: false,
      why: `must be a boolean expression, but its type is ${checked.type} (compare it: e.g. args.flag == true)`,
    };
  }
  return {
    ok: true,
    run(facts) {
      try {
        const value: unknown = withLinks(facts.links, () =>
          parsed(facts as unknown as Record<string, unknown>),
        );
        if (value === true || value === false) return value;
        return new Error(`gave ${typeof value}, not a boolean`);
      } catch (e) {
        return new Error(said(e));
      }
    },
  };
}

/**
 * Proof at load that `matches` reaches RE2 (a library upgrade that changed its AST would otherwise bring
 * JavaScript's backtracking engine back, silently): `\pN` is a digit class to RE2 but the letters `pN` to a
 * JavaScript RegExp without the `u` flag, so only RE2 finds it in "7".
 */
function proveRe2(): void {
  const c = compileExpression('"7".matches("^\\\\pN$") && matches("7", "\\\\pN")');
  const facts: RuleFacts = {
    client: '',
    command: '',
    upstream: '',
    tool: '',
    args: {},
    justification: '',
    now: new Date(0),
  };
  if (!c.ok || c.run(facts) !== true) {
    throw new Error('CEL matches is not routed to RE2 (daemon/rules/environment.ts): refusing to run rules');
  }
}
proveRe2();
