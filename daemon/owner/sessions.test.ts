import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { OwnerSessions, readCookie, SESSION_COOKIE } from './sessions.js';

const req = (cookie?: string) => ({ headers: cookie === undefined ? {} : { cookie } }) as IncomingMessage;

describe('OwnerSessions', () => {
  it('reads one cookie among several', () => {
    expect(readCookie('a=1; ogf_owner_session=xyz; b=2', SESSION_COOKIE)).toBe('xyz');
    expect(readCookie('a=1', SESSION_COOKIE)).toBeUndefined();
    expect(readCookie(undefined, SESSION_COOKIE)).toBeUndefined();
  });

  it('accepts its own random session ids until they expire or end', () => {
    let now = 0;
    const s = new OwnerSessions(() => now);
    const id = s.create();
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.create()).not.toBe(id);
    expect(s.isValid(req(`${SESSION_COOKIE}=${id}`))).toBe(true);
    expect(s.isValid(req(`${SESSION_COOKIE}=${id}x`))).toBe(false);
    expect(s.isValid(req())).toBe(false);
    s.end(req(`${SESSION_COOKIE}=${id}`));
    expect(s.isValid(req(`${SESSION_COOKIE}=${id}`))).toBe(false);
    const later = s.create();
    now += 13 * 60 * 60 * 1000;
    expect(s.isValid(req(`${SESSION_COOKIE}=${later}`))).toBe(false);
  });

  it('sets an HttpOnly, SameSite=Strict cookie on path /', () => {
    const c = OwnerSessions.cookie('abc', false);
    expect(c).toMatch(/^ogf_owner_session=abc; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/);
    expect(OwnerSessions.cookie('abc', true)).toMatch(/; Secure$/);
  });
});
