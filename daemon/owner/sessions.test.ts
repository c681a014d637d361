import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { OwnerCredential } from '../tokens/tokens.js';
import { OwnerSessions, readCookies, SESSION_COOKIE, type SessionEnd } from './sessions.js';

const req = (cookie?: string) => ({ headers: cookie === undefined ? {} : { cookie } }) as IncomingMessage;
const withCookie = (id: string) => req(`${SESSION_COOKIE}=${id}`);
const HOUR = 60 * 60 * 1000;
const OWNER: OwnerCredential = { name: 'owner', hash: 'a'.repeat(64) };
const ALICE: OwnerCredential = { name: 'alice', hash: 'b'.repeat(64) };

function recording(s: OwnerSessions): Array<[string, SessionEnd]> {
  const ended: Array<[string, SessionEnd]> = [];
  s.onEnd((handle, why) => ended.push([handle, why]));
  return ended;
}

describe('OwnerSessions', () => {
  it('reads every value of one cookie among several, in order', () => {
    expect(readCookies('a=1; ogf_owner_session=xyz; b=2', SESSION_COOKIE)).toEqual(['xyz']);
    expect(readCookies('ogf_owner_session=junk; a=1; ogf_owner_session=xyz', SESSION_COOKIE)).toEqual([
      'junk',
      'xyz',
    ]);
    expect(readCookies('a=1', SESSION_COOKIE)).toEqual([]);
    expect(readCookies(undefined, SESSION_COOKIE)).toEqual([]);
  });

  it('[c5.owner-key] a cookie planted before the real one (another local server, a longer Path) does not shadow it', () => {
    const s = new OwnerSessions(() => 0);
    const { id, key } = s.create(OWNER);
    const planted = s.create(ALICE);
    const shadowed = req(`${SESSION_COOKIE}=junk; ${SESSION_COOKIE}=; ${SESSION_COOKIE}=${id}`);
    expect(s.session(shadowed)).toMatch(/^[0-9a-f]{64}$/);
    expect(s.authenticate(shadowed, key)).toMatchObject({ owner: OWNER });
    // Each value is judged with its own key: a live session planted first does not lend its owner to ours.
    const both = req(`${SESSION_COOKIE}=${planted.id}; ${SESSION_COOKIE}=${id}`);
    expect(s.authenticate(both, key)).toMatchObject({ owner: OWNER });
    expect(s.authenticate(both, planted.key)).toMatchObject({ owner: ALICE });
    expect(s.end(both, key)).toBe(true);
    expect(s.authenticate(both, key)).toBeUndefined();
    expect(s.authenticate(both, planted.key)).toMatchObject({ owner: ALICE });
  });

  it('accepts its own random session ids until they expire or end', () => {
    let now = 0;
    const s = new OwnerSessions(() => now);
    const { id, key } = s.create(OWNER);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key).not.toBe(id);
    expect(s.create(OWNER).id).not.toBe(id);
    expect(s.session(withCookie(id))).toMatch(/^[0-9a-f]{64}$/);
    expect(s.session(withCookie(`${id}x`))).toBeUndefined();
    expect(s.session(req())).toBeUndefined();
    // Logging out needs the key too: the cookie alone (all a server on another port gets) ends nothing.
    expect(s.end(withCookie(id), undefined)).toBe(false);
    expect(s.session(withCookie(id))).toBeDefined();
    expect(s.end(withCookie(id), key)).toBe(true);
    expect(s.session(withCookie(id))).toBeUndefined();
    const later = s.create(OWNER);
    now += 13 * HOUR;
    expect(s.session(withCookie(later.id))).toBeUndefined();
  });

  it('[c5.owner-key] authenticates only the cookie together with its own session’s panel key', () => {
    const s = new OwnerSessions(() => 0);
    const a = s.create(OWNER);
    const b = s.create(ALICE);
    const handle = s.session(withCookie(a.id));
    expect(s.authenticate(withCookie(a.id), a.key)).toEqual({ handle, owner: OWNER, via: 'token' });
    expect(s.authenticate(withCookie(b.id), b.key)).toMatchObject({ owner: ALICE });
    // Contract 13.3: a passkey sign-in is told apart (it may add and remove passkeys).
    const p = s.create(OWNER, 'passkey');
    expect(s.authenticate(withCookie(p.id), p.key)).toMatchObject({ owner: OWNER, via: 'passkey' });
    // The cookie alone, a guessed key, the key of another session, the key alone: nothing.
    expect(s.authenticate(withCookie(a.id), undefined)).toBeUndefined();
    expect(s.authenticate(withCookie(a.id), '')).toBeUndefined();
    expect(s.authenticate(withCookie(a.id), 'A'.repeat(43))).toBeUndefined();
    expect(s.authenticate(withCookie(a.id), b.key)).toBeUndefined();
    expect(s.authenticate(withCookie(b.id), a.key)).toBeUndefined();
    expect(s.authenticate(req(), a.key)).toBeUndefined();
    expect(s.authenticate(withCookie(a.id), 'x'.repeat(10_000))).toBeUndefined();
  });

  it('[c5.logout-closes] tells its listeners when a session is logged out, expires (sweep) or is evicted', () => {
    let now = 0;
    const s = new OwnerSessions(() => now, 2 * HOUR);
    const ended = recording(s);
    const out = s.create(OWNER);
    const outHandle = s.session(withCookie(out.id))!;
    s.end(withCookie(out.id), out.key);
    s.end(withCookie(out.id), out.key); // twice: told once
    expect(ended).toEqual([[outHandle, 'logged out']]);

    const early = s.create(OWNER);
    now += HOUR;
    const late = s.create(OWNER);
    const [earlyHandle, lateHandle] = [s.session(withCookie(early.id)), s.session(withCookie(late.id))];
    expect(s.sweep()).toBe(0);
    now += HOUR; // early is 2 h old: expired; late is 1 h old
    expect(s.sweep()).toBe(1);
    expect(ended.at(-1)).toEqual([earlyHandle, 'session expired']);
    expect(s.authenticate(withCookie(early.id), early.key)).toBeUndefined();
    expect(s.authenticate(withCookie(late.id), late.key)?.handle).toBe(lateHandle);
    // Expired but not yet swept: refused, and told at that moment.
    now += HOUR;
    expect(s.authenticate(withCookie(late.id), late.key)).toBeUndefined();
    expect(ended.at(-1)).toEqual([lateHandle, 'session expired']);
    expect(s.sweep()).toBe(0);

    const first = s.create(OWNER);
    const firstHandle = s.session(withCookie(first.id));
    for (let i = 0; i < 255; i++) s.create(OWNER);
    expect(ended.filter(([, why]) => why === 'session evicted')).toEqual([]);
    s.create(OWNER);
    expect(ended.at(-1)).toEqual([firstHandle, 'session evicted']);
  });

  it('ends exactly the sessions whose owner credential went stale (a rotation), telling why', () => {
    const s = new OwnerSessions(() => 0);
    const ended = recording(s);
    const alice = s.create(ALICE);
    const mine = s.create(OWNER);
    const aliceHandle = s.session(withCookie(alice.id));
    expect(s.endWhere((c) => c.name === 'alice', 'token rotated')).toBe(1);
    expect(ended).toEqual([[aliceHandle, 'token rotated']]);
    expect(s.authenticate(withCookie(alice.id), alice.key)).toBeUndefined();
    expect(s.authenticate(withCookie(mine.id), mine.key)).toMatchObject({ owner: OWNER });
  });

  it('sets an HttpOnly, SameSite=Strict cookie on path / that lasts as long as the session', () => {
    const s = new OwnerSessions(() => 0, 90_000);
    const c = s.cookie('abc', false);
    expect(c).toBe('ogf_owner_session=abc; HttpOnly; SameSite=Strict; Path=/; Max-Age=90');
    expect(s.cookie('abc', true)).toMatch(/; Secure$/);
    expect(new OwnerSessions().cookie('abc', false)).toMatch(/; Max-Age=43200$/);
  });
});
