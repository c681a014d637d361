/**
 * A panel session's end closes its sockets at once (contracts.md 5, v2: "Logging out and a session's
 * expiry close that session's sockets at once"), over real sockets against the real daemon: a socket that
 * outlived its login would let whoever holds it keep approving.
 */
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue, upgradeStatus } from './helpers/owner.js';
import { openPanelSocket, type PanelLogin, panelLogin, panelProtocols } from './helpers/panel.js';

const daemons: RunningDaemon[] = [];
const sockets: OwnerSocket[] = [];

async function daemon(env: Record<string, string> = {}): Promise<RunningDaemon> {
  const dataDir = makeDataDir('ogf-owner-session-');
  const d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks.txt')), env });
  daemons.push(d);
  return d;
}

async function socket(d: RunningDaemon, login?: PanelLogin): Promise<OwnerSocket> {
  const s = login ? await openPanelSocket(d, login) : await OwnerSocket.open(d);
  sockets.push(s);
  return s;
}

/** The upgrade status for a login's cookie and key, as the panel would send them. */
function upgradeWith(d: RunningDaemon, login: PanelLogin): Promise<number> {
  return upgradeStatus(d, {
    Cookie: login.cookie,
    'Sec-WebSocket-Protocol': panelProtocols(login.key).join(', '),
    Origin: d.url,
  });
}

/** A POST with exactly these headers (Host included, which fetch cannot set), on its own connection. */
function rawPost(
  d: RunningDaemon,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: 'POST', path, agent: false, headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  for (const d of daemons) {
    await d.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  }
});

describe('[c5.logout-closes] the end of a panel session', () => {
  let d: RunningDaemon;
  let ai: Client;

  beforeAll(async () => {
    d = await daemon();
    ai = await mcpClient(d);
  });
  afterAll(() => ai?.close());

  it('logout closes that session’s sockets at once, and its cookie and key open nothing after', async () => {
    const mine = await panelLogin(d);
    const other = await panelLogin(d);
    const [a, b] = [await socket(d, mine), await socket(d, mine)];
    const otherTab = await socket(d, other);
    const terminal = await socket(d);
    const r = await fetch(`${d.url}/logout`, {
      method: 'POST',
      headers: { Cookie: mine.cookie, 'X-OGF-Owner-Key': mine.key, Origin: d.url },
    });
    expect(r.status).toBe(200);
    await waitFor(
      () => a.closeCode !== undefined && b.closeCode !== undefined,
      'the session’s sockets to close',
    );
    expect([a.closeCode, b.closeCode]).toEqual([1008, 1008]);
    expect(await upgradeWith(d, mine)).toBe(401);
    const probe = await fetch(`${d.url}/owner/session`, {
      headers: { Cookie: mine.cookie, 'X-OGF-Owner-Key': mine.key },
    });
    expect(probe.status).toBe(401);
    // Other sessions and the terminal are untouched, and still hear every change.
    const id = await queue(ai, 'mark', { word: 'afterlogout' });
    await otherTab.upsert(id, (v) => v.version === 1, 'the new command');
    await terminal.upsert(id, (v) => v.version === 1, 'the new command');
    expect(a.frames.some((f) => f.type === 'upsert' && f.command.id === id)).toBe(false);
    expect(await upgradeWith(d, other)).toBe(101);
  });

  it('[c5.logout-origin] a logout from another origin, with a foreign Host, or with the cookie but not its key ends nothing', async () => {
    const mine = await panelLogin(d);
    const tab = await socket(d, mine);
    const attacks: Array<[string, Record<string, string>, number]> = [
      // A page on another 127.0.0.1 port: same site, so the browser sends our cookie (key unknown there).
      ['another port’s Origin', { Cookie: mine.cookie, Origin: 'http://127.0.0.1:1' }, 403],
      [
        'another port’s Origin, even with the key',
        { Cookie: mine.cookie, 'X-OGF-Owner-Key': mine.key, Origin: 'http://127.0.0.1:1' },
        403,
      ],
      ['Origin null', { Cookie: mine.cookie, 'X-OGF-Owner-Key': mine.key, Origin: 'null' }, 403],
      // A server on another port that received the cookie and posts it itself, with no Origin.
      ['the cookie alone', { Cookie: mine.cookie }, 200],
      ['the cookie and a wrong key', { Cookie: mine.cookie, 'X-OGF-Owner-Key': 'A'.repeat(43) }, 200],
    ];
    const got: Record<string, [number, boolean | undefined]> = {};
    for (const [what, headers] of attacks) {
      const r = await rawPost(d, '/logout', headers);
      got[what] = [r.status, (JSON.parse(r.body) as { ended?: boolean }).ended];
    }
    // DNS rebinding: a Host that is not ours is refused before any route (fetch cannot forge Host).
    const rebound = await rawPost(d, '/logout', {
      Cookie: mine.cookie,
      'X-OGF-Owner-Key': mine.key,
      Host: 'evil.example',
    });
    expect(rebound.status).toBe(403);
    expect(got).toEqual(
      Object.fromEntries(
        attacks.map(([what, , status]) => [what, [status, status === 200 ? false : undefined]]),
      ),
    );
    // The session lives: its socket is open and its cookie and key still open another.
    const id = await queue(ai, 'mark', { word: 'stillin' });
    await tab.upsert(id, (v) => v.version === 1, 'the new command');
    expect(tab.closeCode).toBeUndefined();
    expect(await upgradeWith(d, mine)).toBe(101);
  });

  it('[c5.cookie-shadow] a planted ogf_owner_session sent before the real one does not shadow it', async () => {
    const mine = await panelLogin(d);
    const value = mine.cookie.slice('ogf_owner_session='.length);
    const shadowed = {
      ...mine,
      cookie: `ogf_owner_session=planted; ogf_owner_session=; ogf_owner_session=${value}`,
    };
    expect(await upgradeWith(d, shadowed)).toBe(101);
    const probe = await fetch(`${d.url}/owner/session`, {
      headers: { Cookie: shadowed.cookie, 'X-OGF-Owner-Key': mine.key },
    });
    expect(probe.status).toBe(200);
    // The page itself, too: the panel, not the login page.
    const page = await (await fetch(`${d.url}/`, { headers: { Cookie: shadowed.cookie } })).text();
    expect(page).toContain('id="queue"');
  });

  it('a session’s expiry closes its sockets by itself, and its cookie and key open nothing after', async () => {
    const short = await daemon({ OGF_BROKER_OWNER_SESSION_TTL_MS: '2000' });
    const login = await panelLogin(short);
    const tab = await socket(short, login);
    const terminal = await socket(short);
    // Nothing but the clock ends this session.
    await waitFor(() => tab.closeCode !== undefined, 'the expired session’s socket to close');
    expect(tab.closeCode).toBe(1008);
    expect(await upgradeWith(short, login)).toBe(401);
    expect(terminal.closeCode).toBeUndefined();
    // A fresh login works as before.
    expect(await upgradeWith(short, await panelLogin(short))).toBe(101);
  });
});
