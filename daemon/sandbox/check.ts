/**
 * Never unconfined by accident (contract 21): before `start` or `reload` applies a config, every confined
 * catalog command and stdio upstream must be confinable — bubblewrap usable here, each writable path
 * existing — or the config is refused, naming the entry and what is missing. `doctor` and `status` list
 * each entry's confinement (`confinementLines`).
 */
import { existsSync } from 'node:fs';
import { UsageError } from '../base/index.js';
import { type Config, type Confinement, describeConfinement } from '../config/index.js';
import type { Confiner } from './confiner.js';

/** Every command's and stdio upstream's confinement, by the name the config gives it. */
export function confinedEntries(
  config: Config,
): Array<{ field: string; confinement: Confinement | undefined }> {
  return [
    ...Object.entries(config.commands).map(([name, e]) => ({
      field: `commands.${name}`,
      confinement: e.sandbox || undefined,
    })),
    ...Object.entries(config.upstreams)
      .filter(([, u]) => u.argv !== undefined)
      .map(([name, u]) => ({ field: `upstreams.${name}`, confinement: u.sandbox || undefined })),
  ];
}

/** Why `config` cannot run as written here, or undefined. */
export function confinementProblem(config: Config, confiner: Confiner): string | undefined {
  const confined = confinedEntries(config).filter((e) => e.confinement !== undefined);
  for (const { field, confinement } of confined) {
    for (const [i, path] of confinement!.writable.entries()) {
      if (!existsSync(path))
        return `${field}.sandbox.writable[${i}]: ${path} does not exist (create it first)`;
    }
  }
  if (confined.length === 0) return undefined;
  const p = confiner.probe;
  return p.ok ? undefined : `${confined[0]!.field}.sandbox: ${p.why}`;
}

/** Throws the one-line refusal (exit 2) when `config` cannot be confined as it says. */
export function assertConfinable(config: Config, confiner: Confiner): void {
  const why = confinementProblem(config, confiner);
  if (why !== undefined) throw new UsageError(`config ${config.configFile ?? '(none)'}: ${why}`);
}

/** One line per entry: "commands.mark: confined: writes only under /x; no network". */
export function confinementLines(config: Config): string[] {
  return confinedEntries(config).map((e) => `${e.field}: ${describeConfinement(e.confinement)}`);
}
