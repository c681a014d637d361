/**
 * Two umasks (contracts.md 1.1): the daemon's own files — the data dir, broker.db with SQLite's -wal/-shm,
 * session files — are private, so the daemon runs with umask 077; but what it starts for the owner (catalog
 * commands, stdio upstreams, the bridge client) runs with the umask the daemon was started with **(v4)**: a
 * file an approved command writes gets the owner's usual mode (0644 under 022), not 0600 (issue 36 item 2:
 * `drafts/idea.md` came out `-rw-------`).
 *
 * Node's spawn has no umask option and a child inherits the process's at fork, so a spawn runs inside
 * `withOwnerUmask`: the owner's umask for that synchronous call (libuv forks before `spawn` returns), the
 * private one again right after. Files the daemon writes always name their mode (0600, O_EXCL), so the
 * moment's wider umask cannot widen them.
 */

/** The umask the process had before the daemon made it private; undefined until then. */
let ownerUmask: number | undefined;

/** Makes the process umask 077, remembering the one it was started with (the first call's). */
export function usePrivateUmask(): void {
  const before = process.umask(0o077);
  ownerUmask ??= before;
}

/** Runs `spawn` (a synchronous child_process call) under the umask the daemon was started with. */
export function withOwnerUmask<T>(spawn: () => T): T {
  if (ownerUmask === undefined) return spawn();
  const mine = process.umask(ownerUmask);
  try {
    return spawn();
  } finally {
    process.umask(mine);
  }
}
