/**
 * Recovery at start (rules 3 and 4): what a restart makes of the commands the store holds, then the timers,
 * launches and grants rebuilt from it. running → unknown; cues awaiting review or approved → secret not
 * retained (rule 4: secrets are never stored); other approved commands launch now (they never ran); other
 * pending commands keep their original deadline. Cues that were running may still be delivering as orphans:
 * their sessions' launches are held (launches.ts `holdForOrphans`).
 *
 * Written at once, not batched: the memory is rebuilt in this call (a request right after it sees it), and
 * the returned Promise rejects when the store refused a write, which must stop the start (daemon.ts says so
 * in one line). Its own file (issue 20 item 3): the broker calls it once from `start()`.
 */

import type { Logger } from '../../base/index.js';
import { type Clock, iso } from '../../base/index.js';
import { auditOf, logChange } from '../decisions/index.js';
import type { Actor, Command, ConfigGrant, KindPolicies } from '../model/index.js';
import { transition } from '../model/index.js';
import type { AuditEntry, StorePorts } from '../ports/index.js';
import type { Views } from './command-views.js';
import type { Expiry } from './expiry.js';
import type { GrantBook } from './grant-book.js';
import type { Launches } from './launches.js';

export interface RecoveryDeps {
  store: StorePorts;
  clock: Clock;
  log: Logger;
  kinds: KindPolicies;
  /** Survivors are loaded into both views. */
  views: Views;
  /** Survivors awaiting review get their timer back, for their stored deadline. */
  expiry: Expiry;
  /** Approved survivors launch; orphans' sessions are held. */
  launches: Launches;
  /** Live grants loaded and the config's grants reconciled (grant-book.ts `load`). */
  grants: GrantBook;
  configGrants: readonly ConfigGrant[];
  /**
   * Contract 16: whether a command is this node's. Rules 3–4 are applied by each node to its own commands;
   * another node's are loaded as they are (that node recovers them at its own restart).
   */
  own?: (c: Command) => boolean;
}

const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

/** Rebuilds the broker's memory from the store; settles once the restart's writes are stored. */
export function recover(deps: RecoveryDeps): Promise<void> {
  const { store, clock, log, kinds, views, expiry, launches } = deps;
  const at = iso(clock.now());
  const recovered: Array<{ next: Command; audit: AuditEntry }> = [];
  const survivors: Command[] = [];
  const reads = store.committedReads;
  const own = deps.own ?? (() => true);
  const others: Command[] = [];
  for (const c of reads.active()) {
    if (!own(c)) {
      others.push(c);
      continue;
    }
    const r = transition(c, { type: 'restart', at, carriesSecret: kinds.of(c.tool).carriesSecret });
    if (r.ok)
      recovered.push({ next: r.command, audit: auditOf(r.command, 'restart', DAEMON, iso(clock.now())) });
    else survivors.push(c);
  }
  const written = recovered.length > 0 ? store.commands.updateMany(recovered) : undefined;
  for (const { next } of recovered) logChange(log, next, DAEMON);
  // Older restarts' orphans count too, in case the daemon died again within the window.
  launches.holdForOrphans(reads.recentFinal(200).filter(own));
  for (const c of others) views.load(c);
  for (const c of survivors) {
    views.load(c);
    if (c.phase.state === 'awaiting_review') expiry.arm(c);
  }
  for (const c of survivors) if (c.phase.state === 'approved') launches.schedule(c);
  const loaded = deps.grants.load(deps.configGrants);
  return Promise.all([written, loaded]).then(() => undefined);
}
