/**
 * The async ports (core/ports/store.ts) over the synchronous SQLite parts. SQLite answers at once, so each
 * call runs when it is made and returns a settled Promise; while a transaction whose writes are awaited is
 * open, a call made from outside it waits for its end, so no one reads a change before its commit or
 * writes into another's transaction (transaction.ts).
 */
import type {
  AuditStore,
  CommandStore,
  CommittedReads,
  GrantStore,
  OAuthStore,
  PasskeyStore,
  TokenHashStore,
} from '../../core/index.js';
import type { SqliteAudit } from './audit.js';
import type { SqliteCommands } from './commands.js';
import type { SqliteGrants } from './grants.js';
import type { SqliteOAuth } from './oauth.js';
import type { SqlitePasskeys } from './passkeys.js';
import type { SqliteTokenHashes } from './tokens.js';

/** Runs a synchronous store call now, or after the open transaction it must not interleave with. */
export type Run = <T>(call: () => T) => Promise<T>;

/** The command port over SqliteCommands. */
export function commandPort(c: SqliteCommands, run: Run): CommandStore {
  return {
    insert: (command, audit) => run(() => c.insert(command, audit)),
    update: (next, audit) => run(() => c.update(next, audit)),
    amend: (next, audit) => run(() => c.amend(next, audit)),
    updateMany: (changes) => run(() => c.updateMany(changes)),
    get: (id) => run(() => c.get(id)),
    active: () => run(() => c.active()),
    recentFinal: (limit) => run(() => c.recentFinal(limit)),
    history: (limit, before, maxChars) => run(() => c.history(limit, before, maxChars)),
    search: (filter, limit, before) => run(() => c.search(filter, limit, before)),
    tasksOf: (client, limit, maxChars, before) => run(() => c.tasksOf(client, limit, maxChars, before)),
    retentionScan: (after, limit) => run(() => c.retentionScan(after, limit)),
    counts: () => run(() => c.counts()),
  };
}

/** The grant port over SqliteGrants. */
export function grantPort(g: SqliteGrants, run: Run): GrantStore {
  return {
    put: (grant, audit) => run(() => g.put(grant, audit)),
    get: (id) => run(() => g.get(id)),
    live: () => run(() => g.live()),
    recent: (limit) => run(() => g.recent(limit)),
  };
}

/** The audit port over SqliteAudit; `onCheckpoint` is the store's (it hears of commits). */
export function auditPort(a: SqliteAudit, run: Run, onCheckpoint: AuditStore['onCheckpoint']): AuditStore {
  return {
    checkpoint: (at) => run(() => a.checkpoint(at)),
    onCheckpoint,
    append: (entry) =>
      run(() => {
        a.append(entry);
      }),
    forCommand: (id) => run(() => a.forCommand(id)),
    since: (seq, limit) => run(() => a.since(seq, limit)),
    lastOf: (action) => run(() => a.lastOf(action)),
    chainFor: (ids) => run(() => a.chainFor(ids)),
  };
}

/** A token-hash port (owners or MCP clients) over SqliteTokenHashes. */
export function tokenPort(t: SqliteTokenHashes, run: Run): TokenHashStore {
  return {
    byTokenHash: (hash) => run(() => t.byTokenHash(hash)),
    tokenHash: (name) => run(() => t.tokenHash(name)),
    all: () => run(() => t.all()),
    setTokenHash: (name, hash, at, actor, detail) => run(() => t.set(name, hash, at, actor, detail)),
  };
}

/** The OAuth port over SqliteOAuth (contract 15). */
export function oauthPort(o: SqliteOAuth, run: Run): OAuthStore {
  return {
    register: (c) => run(() => o.register(c)),
    registered: (id) => run(() => o.registered(id)),
    registrationsSince: (at) => run(() => o.registrationsSince(at)),
    completeRegistration: (id, at) => run(() => o.completeRegistration(id, at)),
    pendingRegistrations: () => run(() => o.pendingRegistrations()),
    dropRegistrations: (ids) => run(() => o.dropRegistrations(ids)),
    nameUse: (name) => run(() => o.nameUse(name)),
    connect: (c, tokens, audit) => run(() => o.connect(c, tokens, audit)),
    token: (hash) => run(() => o.token(hash)),
    rotate: (old, next, at) => run(() => o.rotate(old, next, at)),
    revokeToken: (hash) => run(() => o.revokeToken(hash)),
    disconnect: (id, at, audit) => run(() => o.disconnect(id, at, audit)),
    connections: () => run(() => o.connections()),
    touch: (id, at) => run(() => o.touch(id, at)),
  };
}

/** The passkey port over SqlitePasskeys (contract 13.3). */
export function passkeyPort(p: SqlitePasskeys, run: Run): PasskeyStore {
  return {
    add: (passkey, audit) => run(() => p.add(passkey, audit)),
    get: (id) => run(() => p.get(id)),
    list: (owner) => run(() => p.list(owner)),
    remove: (owner, id, audit) => run(() => p.remove(owner, id, audit)),
    used: (id, counter, at) => run(() => p.used(id, counter, at)),
    recorded: () => run(() => p.recorded()),
  };
}

/** The reads the broker makes within one synchronous step (CommittedReads: core/ports/store.ts). */
export function committedReads(c: SqliteCommands, g: SqliteGrants): CommittedReads {
  return {
    command: (id) => c.get(id),
    byRequest: (client, requestId) => c.byRequest(client, requestId),
    active: () => c.active(),
    recentFinal: (limit) => c.recentFinal(limit),
    grant: (id) => g.get(id),
    liveGrants: () => g.live(),
  };
}
