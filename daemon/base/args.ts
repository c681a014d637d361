/**
 * Strict flag parsing for every subcommand: an unknown flag or a missing value is a UsageError naming
 * the flag (exit 2, contract 1.1).
 */
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';

export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export function parseFlags(command: string, argv: string[], spec: FlagSpec, positionals = 0): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: positionals > 0 });
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0]!;
    const accepted =
      Object.keys(spec)
        .map((k) => `--${k}`)
        .join(', ') || 'none';
    throw new UsageError(`${command}: ${msg.replace(/\. To specify.*$/, '')} (accepted flags: ${accepted})`);
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(
      `${command}: unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`,
    );
  }
  return { values: parsed.values as Parsed['values'], positionals: parsed.positionals };
}

export function stringFlag(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

/** Every value of a flag given `multiple: true` (`--key A --key B`), in order. */
export function stringsFlag(p: Parsed, name: string): string[] {
  const v = p.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** The flags of a terminal subcommand that keeps `--name` keys (owner actions, grants). */
export interface FlagScanSpec {
  /** Flags taking a value (`--note T` or `--note=T`). */
  values: readonly string[];
  /** Flags taking none. */
  bools: readonly string[];
}

/**
 * Splits `argv` into `--flag` values and positionals against `spec`; throws UsageError naming the flag
 * (`--x: takes no value`, `--x: needs a value`, or `unknown(name)` for a flag `spec` does not list).
 */
export function scanFlags(
  argv: readonly string[],
  spec: FlagScanSpec,
  unknown: (name: string) => string,
): { flags: Map<string, string | true>; args: string[] } {
  const flags = new Map<string, string | true>();
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      args.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq < 0 ? a : a.slice(0, eq);
    if (spec.bools.includes(name)) {
      if (eq >= 0) throw new UsageError(`${name}: takes no value`);
      flags.set(name, true);
    } else if (spec.values.includes(name)) {
      const value = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`${name}: needs a value`);
      flags.set(name, value);
    } else {
      throw new UsageError(unknown(name));
    }
  }
  return { flags, args };
}
