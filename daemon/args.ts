/**
 * Strict flag parsing for every subcommand: an unknown flag or a missing value is a UsageError naming
 * the flag (exit 2, contract 1.1).
 */
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';

export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
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
