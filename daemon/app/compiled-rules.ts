/** The config's rules compiled for the daemon's rule book (contract 11). */
import { UsageError } from '../base/index.js';
import type { Config } from '../config/index.js';
import { compileRules } from '../rules/index.js';

/** The config's rules compiled (loadConfig already refused a bad one: this cannot fail on a loaded config). */
export function compiledRules(config: Config) {
  const compiled = compileRules(config.rules);
  if (!compiled.ok) throw new UsageError(`config: ${compiled.why}`);
  return compiled.rules;
}
