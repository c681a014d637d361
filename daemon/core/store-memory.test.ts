/**
 * What the store costs as broker.db grows (bench rows 5 and 6, docs/performance.md "Snapshot and
 * growth"):
 * - memory: better-sqlite3 builds SQLite with a 16,000 KiB page cache per connection, which a growing
 *   broker.db fills over its first ~10,000 commands, so the daemon's RSS kept climbing long after warm-up.
 *   The store asks for SQLite's own default, 2,000 KiB.
 * - the newest final commands (every owner snapshot, every start) are found through their own index, not
 *   by walking back over every pending command newer than them (10,000 pending: 2.7 ms per snapshot;
 *   100,000, the largest max_pending: 42 ms).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_CACHE_KIB, Store } from './store.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('Store memory', () => {
  it('bounds its SQLite page cache at 2,000 KiB, not the 16,000 KiB better-sqlite3 defaults to', () => {
    dir = mkdtempSync(join(tmpdir(), 'ogf-store-mem-'));
    const store = new Store(join(dir, 'broker.db'));
    try {
      expect(PAGE_CACHE_KIB).toBe(2000);
      expect(store.pageCacheKiB()).toBe(PAGE_CACHE_KIB);
    } finally {
      store.close();
    }
  });

  it('finds the newest final commands through an index of final commands, without scanning pending ones', () => {
    dir = mkdtempSync(join(tmpdir(), 'ogf-store-mem-'));
    const path = join(dir, 'broker.db');
    new Store(path).close();
    const db = new Database(path, { readonly: true });
    try {
      // The query of Store.recentFinal.
      const plan = db
        .prepare(
          "EXPLAIN QUERY PLAN SELECT body FROM commands WHERE state IN ('succeeded','denied','failed','unknown') ORDER BY seq DESC LIMIT ?",
        )
        .all(200) as Array<{ detail: string }>;
      expect(plan.map((r) => r.detail)).toEqual(['SCAN commands USING INDEX commands_final']);
    } finally {
      db.close();
    }
  });
});
