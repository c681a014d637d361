/**
 * A panel session's end closes its sockets at once (contracts.md 5, v2: "Logging out and a session's
 * expiry close that session's sockets at once"), over real sockets against the real daemon: a socket that
 * outlived its login would let whoever holds it keep approving.
 */
import { rmSync } from 'node:fs';
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

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  for (const d of daemons) {
    await d.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  }
});

describe('[S.logout-closes] the end of a panel session', () => {
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
    const r = await fetch(`${d.url}/logout`, { method: 'POST', headers: { Cookie: mine.cookie } });
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
