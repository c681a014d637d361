/**
 * Attack: guessing the owner token by flooding `POST /login` (contracts.md 5, v2: "Login attempts are
 * processed at most 4 at a time and a wrong token is answered after 1 s; a correct token is never locked
 * out"). v0.1 checked its per-address throttle before reading the body and charged it after, so a parallel
 * flood was checked all at once — and, keyed by address, it then locked out the real owner (behind a tunnel
 * everyone is 127.0.0.1).
 *
 * Counting, not timing: the daemon's audit log records each attempt it checked (`owner_login_refused`),
 * so the test reads how much of the flood the daemon has processed at the moment the owner's correct login,
 * sent in the middle of the flood, is answered — and after the attacker hangs up.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows } from './helpers/mcp.js';
import { upgradeStatus } from './helpers/owner.js';

let d: RunningDaemon;

const wrong = (i: number) => `wrong-guess-${String(i).padStart(4, '0')}-${'x'.repeat(30)}`;

beforeAll(async () => {
  d = await startDaemon();
});

afterAll(async () => {
  await d?.stop();
});

interface Attempt {
  /** Resolves with the HTTP status, or 0 when the connection was cut before an answer. */
  answer: Promise<number>;
  /** Resolves once the connection is up and the headers are written. */
  connected: Promise<void>;
  /** Resolves once the whole request (headers and body) is written to the socket. */
  sent: Promise<void>;
  /** Sends the body (the headers went at once). */
  go(): Attempt;
  abort(): void;
}

/**
 * One `POST /login` on its own connection. Its headers go at once and its body on `go()`: v0.1 consulted
 * its throttle on the headers and charged it after the body, so an attacker sent every header first.
 */
function attempt(token: string): Attempt {
  const url = new URL(d.url);
  const body = JSON.stringify({ token });
  const req = request({
    host: url.hostname,
    port: url.port,
    method: 'POST',
    path: '/login',
    agent: false,
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
  });
  const answer = new Promise<number>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('close', () => resolve(0));
  });
  const sent = new Promise<void>((resolve) => req.once('finish', () => resolve()));
  const connected = new Promise<void>((resolve) =>
    req.once('socket', (s) => (s.connecting ? s.once('connect', () => resolve()) : resolve())),
  );
  req.flushHeaders();
  const a: Attempt = {
    answer,
    connected,
    sent,
    go: () => {
      req.end(body);
      return a;
    },
    abort: () => req.destroy(),
  };
  return a;
}

/** Opens `n` guesses, every connection and its headers first, then sends all their bodies at once. */
async function flood(from: number, n: number): Promise<Attempt[]> {
  const all = Array.from({ length: n }, (_, i) => attempt(wrong(from + i)));
  await Promise.all(all.map((a) => a.connected));
  return all.map((a) => a.go());
}

/** How many login attempts the daemon has checked and refused so far (its audit log). */
function refusedCount(): number {
  return auditRows(d).filter((r) => r.action === 'owner_login_refused').length;
}

describe('[c5.login-throttle] a flood of wrong tokens', () => {
  it('is not checked all at once: the owner’s correct token, sent mid-flood, gets in while most of it waits, and what the attacker abandons is never checked', async () => {
    const received: number[] = [];
    const track = (a: Attempt) => {
      void a.answer.then((s) => {
        if (s !== 0) received.push(s);
      });
      return a;
    };
    // The flood's head: 20 parallel guesses; wait until the daemon is busy with them.
    const head = (await flood(0, 20)).map(track);
    await waitFor(() => refusedCount() >= 4, 'the daemon to start checking the flood');
    // The owner logs in now, and the rest of the flood (180 more) arrives right behind.
    const owner = attempt(d.ownerToken).go();
    await owner.sent;
    const tail = (await flood(20, 180)).map(track);
    const ownerStatus = await owner.answer;
    const checkedWhenOwnerIn = refusedCount();
    expect(ownerStatus).toBe(200);
    // The owner was never refused for others' failures, and the flood was not all checked at once:
    // most of it still waits (v0.1 had checked all 200 by now).
    expect(checkedWhenOwnerIn).toBeLessThanOrEqual(100);
    // Guesses are refused (401) or, past what the gate may hold (half the owner's share of connections,
    // 128 at the default cap), answered busy at once and left unchecked (503) — never accepted.
    expect(received.filter((s) => s !== 401 && s !== 503)).toEqual([]);
    // The attacker hangs up; what still waited is dropped unchecked. A last guess, queued behind
    // everything, is answered only once the daemon is done with all before it.
    for (const a of [...head, ...tail]) a.abort();
    const last = attempt(wrong(9999)).go();
    expect(await last.answer).toBe(401);
    const checked = refusedCount();
    expect(checked).toBeLessThan(100);
    expect(d.stderr()).not.toContain(d.ownerToken);
  });

  it('answers a correct token at once even right after many wrong ones: no lockout state', async () => {
    const guesses = await flood(0, 8);
    expect(await Promise.all(guesses.map((g) => g.answer))).toEqual(Array(8).fill(401));
    const r = await fetch(`${d.url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: d.ownerToken }),
    });
    expect(r.status).toBe(200);
  });
});

describe('[c5.login-throttle] owner token guesses over /owner/ws', () => {
  it('[c5.login-throttle] a wrong Authorization: Bearer on the owner socket waits in the same gate as POST /login', async () => {
    // Fill the gate with 24 wrong logins; the first answer proves they are in it (4 checked, 20 queued).
    const logins = Array.from({ length: 24 }, (_, i) => attempt(wrong(9000 + i)).go());
    let answered = 0;
    for (const a of logins) void a.answer.then(() => answered++);
    await waitFor(() => answered > 0, 'the first wrong login to be answered');
    // An attacker guessing over the socket instead: before the fix it was answered at once, a free oracle.
    const status = await upgradeStatus(d, { Authorization: `Bearer ${wrong(9999)}` });
    expect(status).toBe(401);
    // First in, first out: it was checked only after the logins queued ahead of it.
    expect(answered, 'wrong logins answered before the socket guess').toBeGreaterThanOrEqual(16);
    expect(await Promise.all(logins.map((a) => a.answer))).toEqual(logins.map(() => 401));
    const refused = auditRows(d).filter(
      (r) => r.action === 'owner_login_refused' && JSON.parse(String(r.detail)).via === 'bearer',
    );
    expect(refused).toHaveLength(1);
    // The right token still opens the socket.
    expect(await upgradeStatus(d, { Authorization: `Bearer ${d.ownerToken}` })).toBe(101);
  }, 60_000);
});
