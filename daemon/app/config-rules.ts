/**
 * The config's rules as the broker's rule port (contract 11), swapped whole by a reload (contract 17): a
 * request is decided by the rule book in force when it arrives, never by half of two. `path_under` resolves
 * links for commands of the config's stdio upstreams (rules/facts.ts), so the port is rebuilt with them.
 */
import { type Logger, systemClock, UsageError } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { CompiledWhen, RulePort, RuleSubject, RuleVerdict } from '../core/index.js';
import { KINDS } from '../kinds/index.js';
import { compileRules, RuleBook, rulePort } from '../rules/index.js';

export class ConfigRules implements RulePort {
  readonly #log: Logger;
  #port: RulePort;

  constructor(config: Config, log: Logger) {
    this.#log = log;
    this.#port = this.#portOf(config);
  }

  /** The rules of `config` from now on (loadConfig already refused a bad one, so this cannot fail). */
  replace(config: Config): void {
    this.#port = this.#portOf(config);
  }

  decide(subject: RuleSubject, nowMs: number): RuleVerdict {
    return this.#port.decide(subject, nowMs);
  }

  when(expression: string): CompiledWhen {
    return this.#port.when(expression);
  }

  get count(): number {
    return this.#port.count;
  }

  #portOf(config: Config): RulePort {
    const compiled = compileRules(config.rules);
    if (!compiled.ok) throw new UsageError(`config: ${compiled.why}`);
    return rulePort(new RuleBook(compiled.rules, this.#log, systemClock), KINDS, config.upstreams);
  }
}
