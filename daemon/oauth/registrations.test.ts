/**
 * Contract 15 (v4): DCR registrations that complete no authorization within 10 minutes are removed and do
 * not count toward the daily cap; at most 100 wait at once, the oldest giving way; one whose consent card
 * the owner opened stays. Clients over a real broker.db with a fake clock (no waiting 10 minutes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../store/sqlite/index.js';
import { Clients, DCR_PER_DAY, OAuthError } from './clients.js';
import { REGISTRATION_TTL_MS, REGISTRATIONS_PENDING_MAX, registrationsToDrop } from './registrations.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(kept: Set<string> = new Set()) {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-dcr-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'broker.db'));
  stores.push(store);
  const clock = { now: Date.parse('2026-12-06T08:00:00.000Z') };
  const clients = new Clients({
    store: store.oauth,
    allowLoopback: false,
    now: () => clock.now,
    kept: () => kept,
  });
  const register = async () =>
    (await clients.register({ redirect_uris: ['https://app.example/cb'] })).client_id as string;
  return { store, clock, clients, register };
}

const unknown = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(OAuthError);

describe('[c15.flood] uncompleted registrations', () => {
  it('are removed 10 minutes after they were made, unless the owner allowed one of them', async () => {
    const { clock, clients, register } = setup();
    const idle = await register();
    const allowed = await register();
    expect(await clients.complete(await clients.get(allowed))).toBe(true);
    clock.now += REGISTRATION_TTL_MS - 1;
    expect((await clients.get(idle)).client_id).toBe(idle);
    clock.now += 1;
    await unknown(clients.get(idle));
    expect((await clients.get(allowed)).client_id).toBe(allowed);
    // Gone for good: completing it later finds nothing.
    expect(await clients.complete({ client_id: idle, kind: 'dcr', redirect_uris: [] })).toBe(false);
  });

  it('do not count toward the daily cap; completed ones do', async () => {
    const { store, clients, register } = setup();
    for (let i = 0; i < 3 * DCR_PER_DAY; i++) await register();
    expect(await store.oauth.registrationsSince('2026-12-05T08:00:00.000Z')).toBe(0);
    // The flood is bounded: at most REGISTRATIONS_PENDING_MAX wait, the newest ones.
    expect((await store.oauth.pendingRegistrations()).length).toBe(REGISTRATIONS_PENDING_MAX);
    for (let i = 0; i < DCR_PER_DAY; i++) await clients.complete(await clients.get(await register()));
    await expect(register()).rejects.toMatchObject({ status: 429 });
  });

  it('give way oldest first when too many wait, except one whose consent the owner opened', async () => {
    const kept = new Set<string>();
    const { clock, clients, register } = setup(kept);
    const opened = await register();
    kept.add(opened);
    clock.now += 1;
    const oldest = await register();
    for (let i = 0; i < REGISTRATIONS_PENDING_MAX; i++) {
      clock.now += 1;
      await register();
    }
    await unknown(clients.get(oldest));
    expect((await clients.get(opened)).client_id).toBe(opened);
    // Opened and past its 10 minutes: still there while the owner looks at it.
    clock.now += REGISTRATION_TTL_MS;
    expect((await clients.get(opened)).client_id).toBe(opened);
    kept.clear();
    await unknown(clients.get(opened));
  });

  it('registrationsToDrop: expired first, then the oldest beyond the bound, never a kept one', () => {
    const t = Date.parse('2026-12-06T08:00:00.000Z');
    const at = (ms: number) => new Date(t + ms).toISOString();
    const rows = Array.from({ length: REGISTRATIONS_PENDING_MAX }, (_, i) => ({
      client_id: `c${i}`,
      created_at: at(i),
    }));
    expect(registrationsToDrop(rows, t + 1000, new Set(), 0)).toEqual([]);
    expect(registrationsToDrop(rows, t + 1000, new Set(), 1)).toEqual(['c0']);
    expect(registrationsToDrop(rows, t + 1000, new Set(['c0']), 1)).toEqual(['c1']);
    expect(registrationsToDrop(rows, t + REGISTRATION_TTL_MS + 1, new Set(['c0']), 1)).toEqual(['c1']);
  });
});
