/**
 * The store's memory is bounded by what the daemon needs, not by the size of its file (bench row 6,
 * docs/performance-history.md "Snapshot and growth"): better-sqlite3 builds SQLite with a 16,000 KiB page
 * cache per connection, which a growing broker.db fills over its first ~10,000 commands, so the daemon's RSS
 * kept climbing long after warm-up. The store asks for SQLite's own default, 2,000 KiB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_CACHE_KIB, Store } from '../../store/sqlite/index.js';

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
});
