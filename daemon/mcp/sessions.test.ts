import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { type McpSession, SessionRegistry } from './sessions.js';

/** A session whose server only records that it was closed (the registry never touches anything else). */
function session(id: string, lastSeen: number, closed: string[]): McpSession {
  const server = { close: async () => void closed.push(id) } as unknown as McpSession['server'];
  return { id, client: 'local', server, transport: {} as McpSession['transport'], lastSeen, active: 0 };
}

describe('SessionRegistry', () => {
  it('evicts the session idle the longest when at the cap, never a busy one', async () => {
    let now = 1000;
    const closed: string[] = [];
    const reg = new SessionRegistry({ max: 3, log: silentLogger, now: () => now, sweepMs: 3_600_000 });
    const a = session('a', 0, closed);
    const b = session('b', 0, closed);
    const c = session('c', 0, closed);
    reg.add(a);
    reg.add(b);
    reg.add(c);
    // a is the oldest but busy; b was used last; so c goes.
    a.lastSeen = 1;
    c.lastSeen = 2;
    b.lastSeen = 3;
    const end = reg.begin(a);
    expect(await reg.makeRoom()).toBe(true);
    expect(closed).toEqual(['c']);
    expect(reg.get('c')).toBeUndefined();
    reg.add(session('d', 5, closed));
    // All busy: no room, nothing closed.
    reg.begin(b);
    reg.begin(reg.get('d')!);
    expect(await reg.makeRoom()).toBe(false);
    expect(closed).toEqual(['c']);
    now = 2000;
    end();
    end();
    expect(a.active).toBe(0);
    expect(a.lastSeen).toBe(2000);
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
