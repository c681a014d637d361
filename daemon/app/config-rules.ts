/**
 * The rules as the broker's rule port (contracts 11, 18): the config's rules first, swapped whole by a
 * reload (contract 17), then the owners' rules (app/owner-rules.ts), swapped whole when an owner changes one
 * on any node — one rule book over both, so a request is decided by the rules in force when it arrives,
 * never by half of two, and a failed config `deny` rule keeps an owner's `allow` from approving (fail
 * closed). `path_under` resolves links for commands of the config's stdio upstreams (rules/facts.ts), so
 * the port is rebuilt with them.
 */
import { type Logger, systemClock, UsageError } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { CompiledWhen, RulePort, RuleSubject, RuleVerdict } from '../core/index.js';
import { KINDS } from '../kinds/index.js';
import { type CompiledRule, compileRules, RuleBook, type RuleEntry, rulePort } from '../rules/index.js';

export class ConfigRules implements RulePort {
  readonly #log: Logger;
  #config: Config;
  #configRules: CompiledRule[];
  /** The owners' enabled rules, compiled, in their order. */
  #owners: readonly CompiledRule[] = [];
  /** Every owners' rule's id, disabled ones too: a config rule may not take one (reload refuses). */
  #ownerIds: ReadonlySet<string> = new Set();
  #port: RulePort;

  constructor(config: Config, log: Logger) {
    this.#log = log;
    this.#config = config;
    this.#configRules = this.#compile(config);
    this.#port = this.#portOf();
  }

  /** The rules of `config` from now on (loadConfig already refused a bad one, so this cannot fail). */
  replace(config: Config): void {
    this.#config = config;
    this.#configRules = this.#compile(config);
    this.#port = this.#portOf();
  }

  /** Contract 18: the owners' enabled rules from now on, after the config's; `ids` names all of theirs. */
  setOwners(rules: readonly CompiledRule[], ids: Iterable<string> = rules.map((r) => r.id)): void {
    this.#owners = rules;
    this.#ownerIds = new Set(ids);
    this.#port = this.#portOf();
  }

  /**
   * Why `config` cannot be reloaded over the owners' rules: one of its rules takes an owners' rule's id
   * (both would answer to it, and the owners could no longer change theirs: NotFound for a config id).
   */
  clash(config: Config): string | undefined {
    const i = config.rules.findIndex((r) => this.#ownerIds.has(r.id));
    if (i < 0) return undefined;
    return `rules[${i}].id: "${config.rules[i]!.id}" is the id of an owners' rule (made in the panel or with ogf-broker rule add); give this rule another id, or remove the owners' rule first`;
  }

  /** The config's rules in force, as the config gives them. */
  get configEntries(): readonly RuleEntry[] {
    return this.#config.rules;
  }

  decide(subject: RuleSubject, nowMs: number): RuleVerdict {
    return this.#port.decide(subject, nowMs);
  }

  when(expression: string): CompiledWhen {
    return this.#port.when(expression);
  }

  /** How many rules are active: the config's and the owners' enabled ones. */
  get count(): number {
    return this.#port.count;
  }

  #compile(config: Config): CompiledRule[] {
    const compiled = compileRules(config.rules);
    if (!compiled.ok) throw new UsageError(`config: ${compiled.why}`);
    return compiled.rules;
  }

  #portOf(): RulePort {
    const book = new RuleBook([...this.#configRules, ...this.#owners], this.#log, systemClock);
    return rulePort(book, KINDS, this.#config.upstreams);
  }
}
