/**
 * The owners' rules (contract 18): kept in the store, so every node of a shared database evaluates the same
 * ones, after the config's, in the owners' order (config-rules.ts holds the one rule book over both). This
 * desk reads them at start, again whenever the store's feed says another node changed them (or the feed
 * came back after a loss: anything may have changed), and after each change made here — one read at a
 * time, so the book always follows the newest read. A change is checked (a rule compiles: the owner edge's
 * schema did it; an id no other rule has; a config rule is not the owners' to change: NotFound), stored
 * with its audit entry, and told to the owners as a `config` notification. A stored rule that no longer
 * compiles (a newer build's expression read by an older one) decides nothing, and is logged.
 */
import { customAlphabet } from 'nanoid';
import type { RuleInfo } from '../../common/owner-messages.js';
import type { Logger } from '../base/index.js';
import type { AuditEntry, OwnerRule, StorePorts } from '../core/index.js';
import type { PublishedEvent } from '../notify/index.js';
import type { NewRule, RuleAnswer, RulePatch, RulesDesk } from '../owner/index.js';
import { type CompiledRule, compileExpression } from '../rules/index.js';
import type { ConfigRules } from './config-rules.js';

const ruleSuffix = customAlphabet('abcdefghijklmnopqrstuvwxyz0123456789', 10);

export interface OwnerRulesDeps {
  store: Pick<StorePorts, 'ownerRules' | 'subscribe'>;
  book: ConfigRules;
  publish: (e: PublishedEvent) => void;
  log: Logger;
  /** Told how many rules are active after each change of the owners' rules (`status`). */
  counted?: (active: number) => void;
  now?: () => number;
}

type Action = 'rule_added' | 'rule_updated' | 'rule_removed';

export class OwnerRules implements RulesDesk {
  readonly #deps: OwnerRulesDeps;
  /** The owners' rules as last read, in their order. */
  #rules: OwnerRule[] = [];
  #reading: Promise<void> = Promise.resolve();
  #off: (() => void) | undefined;

  constructor(deps: OwnerRulesDeps) {
    this.#deps = deps;
  }

  /** At start: the owners' rules read and in force; then every change the feed announces. */
  async start(): Promise<void> {
    await this.#refresh();
    this.#off = this.#deps.store.subscribe((change) => {
      if (change.table === 'owner_rules' || change.table === undefined) {
        this.#refresh().catch((e: unknown) =>
          this.#deps.log.log('warn', 'owner_rules_read_failed', { error: (e as Error).message }),
        );
      }
    });
  }

  close(): void {
    this.#off?.();
  }

  async list(): Promise<RuleInfo[]> {
    const decided = await this.#deps.store.ownerRules.decided();
    const config: RuleInfo[] = this.#deps.book.configEntries.map((r) => ({
      ...r,
      source: 'config',
      enabled: true,
      decided: decided[r.id] ?? 0,
    }));
    return [...config, ...this.#rules.map((r) => infoOf(r, decided[r.id] ?? 0))];
  }

  async add(rule: NewRule, position: number | undefined, by: string): Promise<RuleAnswer> {
    const id = rule.id ?? `r-${ruleSuffix()}`;
    if (this.#isConfig(id)) return bad(`rule.id ${id} is a config rule's id; choose another`);
    const made: OwnerRule = { ...rule, id, enabled: true, created_by: by, created_at: this.#at() };
    const refused = check(made);
    if (refused !== undefined) return refused;
    const stored = await this.#deps.store.ownerRules.add(made, position, this.#entry('rule_added', made, by));
    if (!stored) return bad(`rule.id ${id} is already an owner's rule's id; choose another`);
    return this.#changed('rule_added', made, by);
  }

  async update(id: string, patch: RulePatch, by: string): Promise<RuleAnswer> {
    const now = await this.#current(id);
    if (now === undefined) return notFound(id, this.#isConfig(id));
    const next: OwnerRule = { ...now, ...patch };
    if (patch.note === '') delete next.note;
    // A rule that stops asking keeps no approvals count.
    if (next.decision !== 'ask' && patch.approvals === undefined) delete next.approvals;
    const refused = check(next);
    if (refused !== undefined) return refused;
    if (!(await this.#deps.store.ownerRules.update(next, this.#entry('rule_updated', next, by))))
      return notFound(id, false);
    return this.#changed('rule_updated', next, by);
  }

  async remove(id: string, by: string): Promise<RuleAnswer> {
    const now = await this.#current(id);
    if (now === undefined) return notFound(id, this.#isConfig(id));
    if (!(await this.#deps.store.ownerRules.remove(id, this.#entry('rule_removed', now, by))))
      return notFound(id, false);
    return this.#changed('rule_removed', now, by);
  }

  /** The rule as the store has it now (another node may have changed it a moment ago). */
  async #current(id: string): Promise<OwnerRule | undefined> {
    return (await this.#deps.store.ownerRules.all()).find((r) => r.id === id);
  }

  #isConfig(id: string): boolean {
    return this.#deps.book.configEntries.some((r) => r.id === id);
  }

  /** After a change stored here: the rules read again (in force before the answer), and the owners told. */
  async #changed(action: Action, rule: OwnerRule, by: string): Promise<RuleAnswer> {
    await this.#refresh();
    const verb = { rule_added: 'added', rule_updated: 'changed', rule_removed: 'removed' }[action];
    const state = rule.enabled ? '' : ' (disabled)';
    this.#deps.publish({
      event: 'config',
      title: `ogf-broker: owner ${by} ${verb} rule ${rule.id}`,
      summary: `Rule ${rule.id}${state}: ${rule.decision} when ${rule.when}. If you did not expect this change, look at the Rules area.`,
      fields: { rule_id: rule.id, change: verb, decision: rule.decision, by },
    });
    const decided =
      action === 'rule_removed' ? 0 : ((await this.#deps.store.ownerRules.decided())[rule.id] ?? 0);
    return { ok: true, rule: infoOf(rule, decided) };
  }

  /** Reads the owners' rules again and puts the enabled ones in force, one read at a time. */
  #refresh(): Promise<void> {
    const next = this.#reading.then(async () => {
      const rules = await this.#deps.store.ownerRules.all();
      this.#rules = rules;
      this.#deps.book.setOwners(
        this.#compiled(rules),
        rules.map((r) => r.id),
      );
      this.#deps.counted?.(this.#deps.book.count);
    });
    // A failed read leaves the rules as they were; the next change or feed notice reads again.
    this.#reading = next.catch(() => {});
    return next;
  }

  #compiled(rules: readonly OwnerRule[]): CompiledRule[] {
    const out: CompiledRule[] = [];
    for (const r of rules) {
      if (!r.enabled) continue;
      const c = compileExpression(r.when);
      if (!c.ok) {
        this.#deps.log.log('warn', 'owner_rule_refused', { rule: r.id, why: c.why });
        continue;
      }
      const entry: CompiledRule = { id: r.id, when: r.when, decision: r.decision, run: c.run };
      if (r.note !== undefined) entry.note = r.note;
      if (r.approvals !== undefined) entry.approvals = r.approvals;
      out.push(entry);
    }
    return out;
  }

  #at(): string {
    return new Date(this.#deps.now?.() ?? Date.now()).toISOString();
  }

  #entry(action: Action, rule: OwnerRule, by: string): AuditEntry {
    return { at: this.#at(), actor: { kind: 'owner', name: by }, action, detail: { rule_id: rule.id, rule } };
  }
}

function infoOf(r: OwnerRule, decided: number): RuleInfo {
  return { ...r, source: 'owner', decided };
}

/** What the schema cannot see of a rule made by a patch: approvals go with `ask` only (contract 11). */
function check(r: OwnerRule): RuleAnswer | undefined {
  if (r.approvals !== undefined && r.decision !== 'ask')
    return bad('approvals is accepted only with decision "ask"');
  const c = compileExpression(r.when);
  if (!c.ok) return bad(`when ${c.why}`);
  return undefined;
}

function bad(message: string): RuleAnswer {
  return { ok: false, code: 'BadMessage', message };
}

function notFound(id: string, config: boolean): RuleAnswer {
  return {
    ok: false,
    code: 'NotFound',
    message: config
      ? `rule ${id} is the config's: change it in the config file (then ogf-broker reload)`
      : `there is no owner's rule ${id}`,
  };
}
