import { describe, expect, it } from 'vitest';
import { silentLogger } from '../base/log.js';
import { type McpSession, SessionRegistry } from './sessions.js';

/** A session whose server only records that it was closed (the registry never touches anything else). */
function session(id: string, lastSeen: number, closed: string[], client = 'local'): McpSession {
  const server = { close: async () => void closed.push(id) } as unknown as McpSession['server'];
  return { id, client, server, transport: {} as McpSession['transport'], lastSeen, active: 0 };
}

/** Reserves room for `client` and, when granted, adds a session `id` used at `at`. */
async function open(reg: SessionRegistry, id: string, client: string, at: number, closed: string[]) {
  const ok = await reg.reserve(client);
  if (ok) reg.add(session(id, at, closed, client));
  return ok;
}

describe('SessionRegistry', () => {
  it("[c3.2.sessions-per-client] a client's 65th session evicts its own least recently used one, never another client's", async () => {
    let now = 0;
    const closed: string[] = [];
    const reg = new SessionRegistry({ log: silentLogger, now: () => now, sweepMs: 3_600_000 });
    // local's one session is the oldest and idle: a global LRU would pick it first.
    expect(await open(reg, 'local-1', 'local', 0, closed)).toBe(true);
    for (let i = 0; i < 64; i++) expect(await open(reg, `evil-${i}`, 'evil', 10 + i, closed)).toBe(true);
    expect(reg.count('evil')).toBe(64);
    expect(closed).toEqual([]);
    // evil-0 was used again since: evil-1 is now its least recently used.
    reg.get('evil-0')!.lastSeen = 100;
    now = 200;
    for (let i = 64; i < 70; i++) expect(await open(reg, `evil-${i}`, 'evil', now + i, closed)).toBe(true);
    expect(closed).toEqual(['evil-1', 'evil-2', 'evil-3', 'evil-4', 'evil-5', 'evil-6']);
    expect(reg.count('evil')).toBe(64);
    expect(reg.get('local-1')).toBeDefined();
    expect(reg.get('evil-0')).toBeDefined();
    await reg.close();
  });

  it('[c3.2.sessions-per-client] never evicts a busy session: with all of its own busy, a client is refused and nothing is closed', async () => {
    const closed: string[] = [];
    const reg = new SessionRegistry({ perClient: 3, log: silentLogger, now: () => 0, sweepMs: 3_600_000 });
    expect(await open(reg, 'l', 'local', 0, closed)).toBe(true);
    for (const id of ['a', 'b', 'c']) expect(await open(reg, id, 'evil', 1, closed)).toBe(true);
    const ends = ['a', 'b', 'c'].map((id) => reg.begin(reg.get(id)!)!);
    expect(await reg.reserve('evil')).toBe(false);
    expect(closed).toEqual([]);
    // Another client is not affected.
    expect(await open(reg, 'l2', 'local', 2, closed)).toBe(true);
    // Once one of evil's is idle again it is the one to go.
    ends[1]!();
    expect(await reg.reserve('evil')).toBe(true);
    expect(closed).toEqual(['b']);
    await reg.close();
  });

  it('[c3.2.sessions-per-client] at the memory bound a new client is refused rather than evict anyone; a client at it gives up its own', async () => {
    const closed: string[] = [];
    const reg = new SessionRegistry({ max: 4, log: silentLogger, now: () => 0, sweepMs: 3_600_000 });
    expect(await open(reg, 'l', 'local', 0, closed)).toBe(true);
    for (const [i, id] of ['a', 'b', 'c'].entries())
      expect(await open(reg, id, 'evil', 1 + i, closed)).toBe(true);
    expect(await reg.reserve('newcomer')).toBe(false);
    expect(closed).toEqual([]);
    expect(await open(reg, 'd', 'evil', 9, closed)).toBe(true);
    expect(closed).toEqual(['a']);
    expect(reg.get('l')).toBeDefined();
    await reg.close();
  });

  it('[c3.2.sessions-per-client] reserves room, so parallel initializes cannot overshoot the cap', async () => {
    const closed: string[] = [];
    const reg = new SessionRegistry({ perClient: 2, log: silentLogger, now: () => 0, sweepMs: 3_600_000 });
    const grants = await Promise.all([reg.reserve('evil'), reg.reserve('evil'), reg.reserve('evil')]);
    expect(grants).toEqual([true, true, false]);
    reg.add(session('a', 0, closed, 'evil'));
    // The second initialize failed: its room is given back.
    reg.release('evil');
    expect(await reg.reserve('evil')).toBe(true);
    reg.add(session('b', 1, closed, 'evil'));
    expect(reg.count('evil')).toBe(2);
    await reg.close();
  });

  it('bounds the requests one client has in flight, and counts each end once', async () => {
    let now = 0;
    const closed: string[] = [];
    const reg = new SessionRegistry({
      maxBusyPerClient: 2,
      log: silentLogger,
      now: () => now,
      sweepMs: 3_600_000,
    });
    await open(reg, 'e1', 'evil', 0, closed);
    await open(reg, 'e2', 'evil', 0, closed);
    await open(reg, 'l', 'local', 0, closed);
    const first = reg.begin(reg.get('e1')!)!;
    reg.begin(reg.get('e2')!);
    expect(reg.begin(reg.get('e1')!)).toBeUndefined();
    expect(reg.begin(reg.get('l')!)).toBeDefined();
    now = 2000;
    first();
    first();
    expect(reg.get('e1')!.active).toBe(0);
    expect(reg.get('e1')!.lastSeen).toBe(2000);
    expect(reg.begin(reg.get('e1')!)).toBeDefined();
    expect(reg.begin(reg.get('e1')!)).toBeUndefined();
    await reg.close();
  });

  it("counts a client's sessionless (2026-07-28) requests and its sessions' requests against one bound", async () => {
    const closed: string[] = [];
    const reg = new SessionRegistry({ maxBusyPerClient: 2, log: silentLogger, sweepMs: 3_600_000 });
    await open(reg, 'e1', 'evil', 0, closed);
    expect(reg.maxBusyPerClient).toBe(2);
    const modern = reg.beginRequest('evil')!;
    expect(modern).toBeDefined();
    const onSession = reg.begin(reg.get('e1')!)!;
    expect(reg.beginRequest('evil')).toBeUndefined();
    expect(reg.begin(reg.get('e1')!)).toBeUndefined();
    expect(reg.beginRequest('local')).toBeDefined();
    modern();
    modern();
    expect(reg.get('e1')!.active).toBe(1);
    const again = reg.beginRequest('evil');
    expect(again).toBeDefined();
    expect(reg.beginRequest('evil')).toBeUndefined();
    onSession();
    again!();
    expect(reg.begin(reg.get('e1')!)).toBeDefined();
    expect(reg.beginRequest('evil')).toBeDefined();
    expect(reg.beginRequest('evil')).toBeUndefined();
    await reg.close();
  });

  it('closes sessions idle longer than idleMs on a sweep, and only those', async () => {
    let now = 0;
    const closed: string[] = [];
    const reg = new SessionRegistry({ idleMs: 100, log: silentLogger, now: () => now, sweepMs: 3_600_000 });
    reg.add(session('old', 0, closed));
    reg.add(session('busy', 0, closed));
    reg.begin(reg.get('busy')!);
    now = 50;
    reg.add(session('fresh', 50, closed));
    now = 120;
    reg.sweep();
    await new Promise((r) => setImmediate(r));
    expect(closed).toEqual(['old']);
    expect(reg.size).toBe(2);
    await reg.close();
    await reg.close();
    expect(closed.sort()).toEqual(['busy', 'fresh', 'old']);
  });
});
