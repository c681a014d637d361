/**
 * The owners' rules as the store keeps them (contract 18): a port like the others of store.ts, in a file
 * of its own. Both stores implement it (store/sqlite/owner-rules.ts, store/postgres/owner-rules.ts); the
 * daemon's desk (app/owner-rules.ts) reads and changes them.
 */
import type { AuditEntry } from '../model/index.js';

/**
 * Contract 18 (v4): a rule an owner made (the panel's "Always", its Rules area, `ogf-broker rule add`), stored
 * so every node of a shared database evaluates it, after the config's rules, in the owners' order.
 */
export interface OwnerRule {
  id: string;
  when: string;
  decision: 'allow' | 'deny' | 'ask';
  note?: string;
  approvals?: number;
  enabled: boolean;
  created_by: string;
  created_at: string;
}

/** The owners' rules (contract 18), each change with its audit entry, atomically. */
export interface OwnerRuleStore {
  /** Every owner's rule, in the owners' order. */
  all(): Promise<OwnerRule[]>;
  /**
   * Adds a rule before the one at `position` (0: first of the owners' rules; absent or past the end: last);
   * false (nothing written) when its id is taken.
   */
  add(rule: OwnerRule, position: number | undefined, audit: AuditEntry): Promise<boolean>;
  /** Replaces the rule with its id, keeping its place; false (nothing written) when there is none. */
  update(rule: OwnerRule, audit: AuditEntry): Promise<boolean>;
  /** Removes a rule; false (nothing written) when there is none. */
  remove(id: string, audit: AuditEntry): Promise<boolean>;
  /**
   * How many requests each rule (the config's or an owner's) decided, by rule id: the audit entries it
   * approved or denied a request with (actor `rule:<id>`), counted on every node's record.
   */
  decided(): Promise<Record<string, number>>;
}
