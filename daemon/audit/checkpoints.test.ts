/**
 * Checkpoints (contract 14) on a real broker.db: the store signs one with every 1,000th entry in that
 * entry's transaction, the timer's call signs one at the tail only when there is something new, listeners
 * hear of each after its commit and never of one a rolled-back batch made, and each signature verifies
 * under the data dir's audit.pub.
 */
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Checkpoint, checkpointPayload } from '../core/index.js';
import { Store } from '../store/sqlite/index.js';
import { loadOrCreateAuditKey, signerOf } from './keys.js';

const at = '2026-12-01T10:00:00.000Z';

describe('[c14.checkpoints] signed checkpoints', () => {
  it('signs every 1,000th entry, and the tail on demand when new entries exist', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ogf-cp-'));
    const key = loadOrCreateAuditKey(dir);
    expect(statSync(join(dir, 'audit.key')).mode & 0o777).toBe(0o600);
    expect(loadOrCreateAuditKey(dir).publicPem).toBe(key.publicPem); // kept, not remade
    const pub = createPublicKey(readFileSync(join(dir, 'audit.pub'), 'utf8'));
    const store = new Store(join(dir, 'broker.db'), { signer: signerOf(key) });
    const heard: Checkpoint[] = [];
    store.audits.onCheckpoint((cp) => heard.push(cp));
    for (let i = 0; i < 2500; i++) {
      await store.audits.append({
        at,
        actor: { kind: 'daemon', name: 'daemon' },
        action: 'owner_login',
        detail: { i },
      });
    }
    expect(heard.map((c) => c.seq)).toEqual([1000, 2000]);
    expect((await store.audits.checkpoint('2026-12-01T10:10:00.000Z'))?.seq).toBe(2500);
    expect(await store.audits.checkpoint('2026-12-01T10:20:00.000Z')).toBeUndefined(); // nothing new
    expect(heard.map((c) => c.seq)).toEqual([1000, 2000, 2500]);
    for (const cp of heard) {
      expect(verify(null, Buffer.from(checkpointPayload(cp)), pub, Buffer.from(cp.signature, 'base64'))).toBe(
        true,
      );
    }
    // A batch that fails after its 3,000th entry leaves neither the entry nor a checkpoint, and no one hears.
    for (let i = 2500; i < 2999; i++) {
      await store.audits.append({
        at,
        actor: { kind: 'daemon', name: 'daemon' },
        action: 'owner_login',
        detail: { i },
      });
    }
    await expect(
      store.transaction(async () => {
        await store.audits.append({
          at,
          actor: { kind: 'daemon', name: 'daemon' },
          action: 'owner_login',
          detail: {},
        });
        throw new Error('the batch fails');
      }),
    ).rejects.toThrow('the batch fails');
    expect(heard.map((c) => c.seq)).toEqual([1000, 2000, 2500]);
    await store.audits.append({
      at,
      actor: { kind: 'daemon', name: 'daemon' },
      action: 'owner_login',
      detail: {},
    });
    expect(heard.map((c) => c.seq)).toEqual([1000, 2000, 2500, 3000]);
    store.close();
  });
});
