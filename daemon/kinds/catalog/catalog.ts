/**
 * The owner's command catalog (contracts.md 1.3): validates a caller's `args` against a command's params
 * and builds the exact argv — literals, or one whole `{name}` placeholder per element; no shell is ever
 * involved, so a param value is always exactly one argv element.
 *
 * A string value must also pass the character rule (daemon/base/text-rules.ts: no control or bidi characters,
 * newline and tab only with `allow_newlines`) and the owner's pattern, anchored and matched in linear time
 * by RE2 (daemon/base/patterns.ts) — compiled once, here, when the catalog is built.
 */

import {
  anchorPattern,
  charactersAccepted,
  compilePattern,
  hasForbiddenCharacter,
  type OwnerPattern,
} from '../../base/index.js';
import { type CatalogEntry, type Config, describeConfinement, type ParamSpec } from '../../config/index.js';
import type { SubmitRequest } from '../../core/index.js';

/** A catalog command's description for `list_commands` (contract 3.1). */
export interface CatalogListing {
  name: string;
  description: string;
  params_schema: Record<string, unknown>;
  timeout_s: number;
}

export type PrepareResult =
  | { ok: true; request: SubmitRequest }
  | { ok: false; code: 'InvalidArguments' | 'UnknownCommand'; message: string };

export interface CatalogApi {
  list(): CatalogListing[];
  /** Validates `args` against the named command's params and builds its argv; names the offending field. */
  prepare(name: string, args: unknown, client: string): PrepareResult;
}

const PLACEHOLDER_RE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

function describe(value: unknown): string {
  if (value === undefined) return 'nothing (it is required)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'a non-finite number';
  if (typeof value === 'boolean') return String(value);
  return `an ${typeof value}`;
}

type StringSpec = Extract<ParamSpec, { type: 'string' }>;

/** A param with its pattern compiled (string params only). */
interface Param {
  spec: ParamSpec;
  pattern: OwnerPattern | undefined;
}

function accepts({ spec, pattern }: Param): string {
  switch (spec.type) {
    case 'string': {
      const chars = charactersAccepted(spec.allow_newlines === true);
      return `a string of at most ${spec.max_length} characters ${chars}${pattern ? ` matching ${pattern.anchored}` : ''}`;
    }
    case 'integer':
      return `an integer from ${spec.min} to ${spec.max}`;
    case 'enum':
      return `one of ${spec.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
}

/** Why a value is refused (the end of the message, never the value itself), or undefined when valid. */
function refusal({ spec, pattern }: Param, value: unknown): string | undefined {
  switch (spec.type) {
    case 'string':
      if (typeof value !== 'string' || [...value].length > spec.max_length) return describe(value);
      // Before the pattern: a pattern that admits anything must not admit a terminal escape (contract 1.3).
      if (hasForbiddenCharacter(value, spec.allow_newlines === true)) return 'a control character';
      return pattern === undefined || pattern.matches(value) ? undefined : describe(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && value >= spec.min && value <= spec.max
        ? undefined
        : describe(value);
    case 'enum':
      return typeof value === 'string' && spec.values.includes(value) ? undefined : describe(value);
  }
}

/** Compiles a string param's pattern; config.ts refused every pattern RE2 cannot compile. */
function compiled(spec: StringSpec): OwnerPattern | undefined {
  if (spec.pattern === undefined) return undefined;
  const c = compilePattern(spec.pattern);
  if (!c.ok) throw new Error(`pattern refused after config validation: ${c.why}`);
  return c.pattern;
}

/** The JSON Schema of a command's params, for `list_commands`. */
export function paramsJsonSchema(entry: CatalogEntry): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(entry.params)) {
    if (spec.type === 'string') {
      // The pattern as it is applied (anchored, contract 1.3); the character rule JSON Schema cannot say
      // without a pattern of its own, so it is said in words.
      properties[name] = {
        type: 'string',
        maxLength: spec.max_length,
        ...(spec.pattern === undefined ? {} : { pattern: anchorPattern(spec.pattern) }),
        description: `At most ${spec.max_length} characters, ${charactersAccepted(spec.allow_newlines === true)}.`,
      };
    } else if (spec.type === 'integer') {
      properties[name] = { type: 'integer', minimum: spec.min, maximum: spec.max };
    } else {
      properties[name] = { type: 'string', enum: spec.values };
    }
  }
  return { type: 'object', properties, required: Object.keys(entry.params), additionalProperties: false };
}

function compiledParams(commands: Record<string, CatalogEntry>): Map<string, Array<[string, Param]>> {
  const params = new Map<string, Array<[string, Param]>>();
  for (const [name, entry] of Object.entries(commands)) {
    params.set(
      name,
      Object.entries(entry.params).map(([param, spec]) => [
        param,
        { spec, pattern: spec.type === 'string' ? compiled(spec) : undefined },
      ]),
    );
  }
  return params;
}

export class Catalog implements CatalogApi {
  #commands: Record<string, CatalogEntry>;
  /** Each command's params with their patterns compiled once, here, never per call. */
  #params: Map<string, Array<[string, Param]>>;

  constructor(config: Pick<Config, 'commands'>) {
    this.#commands = config.commands;
    this.#params = compiledParams(config.commands);
  }

  /**
   * A reload's catalog (contract 17): requests from now on are checked against it. A command approved
   * before keeps the argv the owner approved (it is stored with the command).
   */
  reload(config: Pick<Config, 'commands'>): void {
    const params = compiledParams(config.commands);
    this.#commands = config.commands;
    this.#params = params;
  }

  entry(name: string): CatalogEntry | undefined {
    return Object.hasOwn(this.#commands, name) ? this.#commands[name] : undefined;
  }

  list(): CatalogListing[] {
    return Object.entries(this.#commands).map(([name, e]) => ({
      name,
      description: e.description,
      params_schema: paramsJsonSchema(e),
      timeout_s: e.timeout_s,
    }));
  }

  prepare(name: string, args: unknown, client: string): PrepareResult {
    const entry = this.entry(name);
    if (entry === undefined) {
      const known = Object.keys(this.#commands);
      return {
        ok: false,
        code: 'UnknownCommand',
        message: `command must be a catalog name (${known.length ? known.join(', ') : 'the catalog is empty'}), got ${JSON.stringify(name).slice(0, 80)}`,
      };
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return {
        ok: false,
        code: 'InvalidArguments',
        message: `args must be an object of ${name}'s params, got ${describe(args)}`,
      };
    }
    const given = args as Record<string, unknown>;
    for (const key of Object.keys(given)) {
      if (!Object.hasOwn(entry.params, key)) {
        const names = Object.keys(entry.params);
        return {
          ok: false,
          code: 'InvalidArguments',
          message: `args.${key.slice(0, 64)} is not a param of ${name} (accepted: ${names.length ? names.join(', ') : 'none; pass {}'})`,
        };
      }
    }
    const clean: Record<string, unknown> = {};
    for (const [param, p] of this.#params.get(name) ?? []) {
      const value = given[param];
      const got = refusal(p, value);
      if (got !== undefined) {
        return {
          ok: false,
          code: 'InvalidArguments',
          message: `args.${param} must be ${accepts(p)}, got ${got}`,
        };
      }
      clean[param] = value;
    }
    const argv = entry.argv.map((el) => {
      const m = PLACEHOLDER_RE.exec(el);
      return m ? String(clean[m[1]!]) : el;
    });
    return {
      ok: true,
      request: {
        tool: 'run_command_wait',
        command: name,
        args: clean,
        display: argv,
        client,
        // Contract 21: what its process may touch, as the owner decides on it.
        reach: describeConfinement(entry.sandbox || undefined),
      },
    };
  }
}
