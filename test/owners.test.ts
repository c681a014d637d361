/**
 * Named owners (contracts.md 9, 1.1, 5 v2) through the real daemon, the real `ogf-broker` CLI in another
 * process and real owner sockets: owners are added with `token owner --name`, each logs in as itself, its
 * decisions carry its name (View, audit table, `ogf-broker list`), and a `--rotate` run while the daemon
 * runs ends that owner's panel sessions and sockets at once — Bearer ones included — and nobody else's.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows } from './helpers/mcp.js';
import {
  addOwner,
  bearerSocket,
  mcpClient,
  type OwnerLogin,
  OwnerSocket,
  ownerCatalog,
  queue,
  upgradeStatus,
} from './helpers/owner.js';
import { openPanelSocket, type PanelLogin, panelLogin, panelProtocols } from './helpers/panel.js';

let d: RunningDaemon;
let ai: Client;
let alice: OwnerLogin;
let bob: OwnerLogin;
const sockets: OwnerSocket[] = [];

async function track(s: Promise<OwnerSocket>): Promise<OwnerSocket> {
  const socket = await s;
  sockets.push(socket);
  return socket;
}

function config(markFile: string): Record<string, unknown> {
  const base = ownerCatalog(markFile) as { commands: Record<string, unknown> };
  return {
    ...base,
    commands: {
      ...base.commands,
      fail: { description: 'Exits 3', argv: [process.execPath, '-e', 'process.exit(3)'], timeout_s: 30 },
    },
  };
}

/** POST /login with a token, as the login page does; resolves to the HTTP status. */
async function loginStatus(token: string): Promise<number> {
  const r = await fetch(`${d.url}/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  await r.body?.cancel();
  return r.status;
}

/** The upgrade status of a panel login's cookie and key. */
function panelUpgrade(login: PanelLogin): Promise<number> {
  return upgradeStatus(d, {
    Cookie: login.cookie,
    'Sec-WebSocket-Protocol': panelProtocols(login.key).join(', '),
    Origin: d.url,
  });
}

function audited(id: string): Array<{ action: string; actor_kind: string; actor: string }> {
  return auditRows(d).filter((r) => r.command_id === id) as Array<{
    action: string;
    actor_kind: string;
    actor: string;
  }>;
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-owners-');
  d = await startDaemon({ dataDir, config: config(join(dataDir, 'marks.txt')) });
  ai = await mcpClient(d);
  alice = await addOwner(d, 'alice');
  bob = await addOwner(d, 'bob');
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('[c9.named] owners with names', () => {
  it('token owner --name prints a new owner’s login URL once, alone on the last line, at the running daemon’s address; only its hash is kept', async () => {
    const carol = await runCli(['token', 'owner', '--data-dir', d.dataDir, '--name', 'carol']);
    expect(carol.code).toBe(0);
    const lines = carol.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(new RegExp(`^${d.url}/login#token=[A-Za-z0-9_-]{43}$`));
    expect(lines.slice(0, -1).join('\n')).toMatch(/shown only this once/);
    const token = lines.at(-1)!.split('#token=')[1]!;
    for (const f of ['broker.db', 'broker.db-wal'])
      expect(readFileSync(join(d.dataDir, f)).includes(Buffer.from(token))).toBe(false);
    expect(d.stderr()).not.toContain(token);
    expect(
      auditRows(d)
        .filter((r) => r.action === 'owner_created')
        .map((r) => r.detail),
    ).toEqual(expect.arrayContaining([JSON.stringify({ owner: 'carol' })]));
    // Owner `owner` is there from the first start, and its URL can be printed any time.
    for (const args of [[], ['--name', 'owner']]) {
      const r = await runCli(['token', 'owner', '--data-dir', d.dataDir, ...args]);
      expect(r.code).toBe(0);
      expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${d.url}/login#token=${d.ownerToken}`);
    }
  });

  it('asking again for an existing owner exits 2 in one line pointing to --rotate, and changes nothing', async () => {
    const again = await runCli(['token', 'owner', '--data-dir', d.dataDir, '--name', 'alice']);
    expect(again.code).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toContain('--rotate');
    expect(await loginStatus(alice.token)).toBe(200);
    const bad = await runCli(['token', 'owner', '--data-dir', d.dataDir, '--name', 'Alice Smith']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--name: must match ^[a-z][a-z0-9_-]{0,31}$');
  });

  it('each owner logs in with its own token, by panel and by Bearer, and hello names it', async () => {
    const ownerTerminal = await track(OwnerSocket.open(d));
    const aliceBot = await track(bearerSocket(d, alice.token));
    const bobPanel = await track(openPanelSocket(d, await panelLogin(d, bob.token)));
    const helloOf = (s: OwnerSocket) => s.frames.find((f) => f.type === 'hello')?.owner;
    expect([helloOf(ownerTerminal), helloOf(aliceBot), helloOf(bobPanel)]).toEqual(['owner', 'alice', 'bob']);
    expect(await loginStatus('n'.repeat(43))).toBe(401);
  });
});

describe('[c9.decided-by] every decision records the owner’s name', () => {
  it('alice approves, bob denies, the terminal approves as owner, alice reconciles: decided_by, the audit actor and `list` say who', async () => {
    const aliceBot = await track(bearerSocket(d, alice.token));
    const bobPanel = await track(openPanelSocket(d, await panelLogin(d, bob.token)));
    const watcher = await track(OwnerSocket.open(d));

    const approved = await queue(ai, 'mark', { word: 'byalice' });
    const v1 = await aliceBot.view(approved, (v) => v.version === 1, 'the request at alice');
    expect(await aliceBot.request({ type: 'approve', id: approved, version: v1.version })).toMatchObject({
      ok: true,
    });
    const done = await watcher.view(approved, (v) => v.status === 'SUCCEEDED', 'alice’s approval to run');
    expect(done.decided_by).toBe('alice');

    const denied = await queue(ai, 'mark', { word: 'bybob' });
    await bobPanel.view(denied, (v) => v.version === 1, 'the request at bob');
    expect(await bobPanel.request({ type: 'deny', id: denied, version: 1 })).toMatchObject({ ok: true });
    expect((await watcher.view(denied, (v) => v.status === 'DENIED', 'bob’s deny')).decided_by).toBe('bob');

    const terminal = await queue(ai, 'mark', { word: 'byterminal' });
    await watcher.view(terminal, (v) => v.version === 1, 'the terminal’s request');
    const approve = await runCli(['approve', terminal, '--data-dir', d.dataDir]);
    expect(approve.code).toBe(0);
    const ran = await watcher.view(terminal, (v) => v.status === 'SUCCEEDED', 'the terminal’s approval');
    expect(ran.decided_by).toBe('owner');

    const failed = await queue(ai, 'fail', {});
    await aliceBot.view(failed, (v) => v.version === 1, 'the failing request');
    expect(await aliceBot.request({ type: 'approve', id: failed, version: 1 })).toMatchObject({ ok: true });
    await aliceBot.view(failed, (v) => v.status === 'ERROR', 'the failure');
    expect(
      await bobPanel.request({ type: 'reconcile', id: failed, outcome: 'not_delivered', note: 'checked' }),
    ).toMatchObject({ ok: true });

    // The audit table in broker.db names the owner as the actor of each decision.
    const actor = (id: string, action: string) => {
      const row = audited(id).find((r) => r.action === action);
      return row && { kind: row.actor_kind, name: row.actor };
    };
    expect(actor(approved, 'approve')).toEqual({ kind: 'owner', name: 'alice' });
    expect(actor(denied, 'deny')).toEqual({ kind: 'owner', name: 'bob' });
    expect(actor(terminal, 'approve')).toEqual({ kind: 'owner', name: 'owner' });
    expect(actor(failed, 'reconcile')).toEqual({ kind: 'owner', name: 'bob' });
    const decisions = auditRows(d).filter((r) => ['approve', 'deny', 'reconcile'].includes(String(r.action)));
    expect(decisions.filter((r) => !['alice', 'bob', 'owner'].includes(String(r.actor)))).toEqual([]);

    // `ogf-broker list --all` shows who decided each one.
    const list = await runCli(['list', '--all', '--data-dir', d.dataDir]);
    expect(list.code).toBe(0);
    const header = (id: string) => list.stdout.split('\n').find((l) => l.startsWith(id));
    expect(header(approved)).toMatch(/decided by alice$/);
    expect(header(denied)).toMatch(/decided by bob$/);
    expect(header(terminal)).toMatch(/decided by owner$/);
  });
});

describe('[c9.rotate] rotating an owner’s token while the daemon runs', () => {
  it('closes alice’s panel session and Bearer socket at once (1008), the old token logs in nowhere, the new one does; the others stay', async () => {
    const aliceLogin = await panelLogin(d, alice.token);
    const alicePanel = await track(openPanelSocket(d, aliceLogin));
    const aliceBot = await track(bearerSocket(d, alice.token));
    const ownerTerminal = await track(OwnerSocket.open(d));
    const bobLogin = await panelLogin(d, bob.token);
    const bobPanel = await track(openPanelSocket(d, bobLogin));
    const pending = await queue(ai, 'mark', { word: 'afterrotate' });
    await aliceBot.view(pending, (v) => v.version === 1, 'the request at alice');

    const rotated = await addOwner(d, 'alice', true);
    expect(rotated.token).not.toBe(alice.token);
    expect(rotated.url).toBe(`${d.url}/login#token=${rotated.token}`);
    // The CLI has exited: from now on nothing alice's old sockets send is acted on, poll or no poll.
    aliceBot.ws.send(JSON.stringify({ type: 'approve', req_id: 'late', id: pending, version: 1 }));
    await waitFor(
      () => alicePanel.closeCode !== undefined && aliceBot.closeCode !== undefined,
      'alice’s sockets to close',
    );
    expect([alicePanel.closeCode, aliceBot.closeCode]).toEqual([1008, 1008]);
    expect(aliceBot.closeReason).toBe('token rotated');
    expect(aliceBot.frames.some((f) => f.type === 'reply' && f.req_id === 'late')).toBe(false);

    // The old token and the old session open nothing; the new token does.
    expect(await loginStatus(alice.token)).toBe(401);
    expect(await upgradeStatus(d, { Authorization: `Bearer ${alice.token}` })).toBe(401);
    expect(await panelUpgrade(aliceLogin)).toBe(401);
    const fresh = await track(bearerSocket(d, rotated.token));
    expect(fresh.frames.find((f) => f.type === 'hello')?.owner).toBe('alice');
    expect(fresh.snapshotView(pending)).toMatchObject({ state: 'awaiting_review', version: 1 });
    alice = rotated;

    // Owner `owner` and bob were not touched: their sockets are open and hear the next change.
    expect(ownerTerminal.closeCode).toBeUndefined();
    expect(bobPanel.closeCode).toBeUndefined();
    expect(await bobPanel.request({ type: 'deny', id: pending, version: 1 })).toMatchObject({ ok: true });
    await ownerTerminal.upsert(pending, (v) => v.status === 'DENIED', 'bob’s deny at owner');
    expect(await panelUpgrade(bobLogin)).toBe(101);
    const rotations = auditRows(d).filter((r) => r.action === 'owner_token_rotated');
    expect(rotations.map((r) => [r.actor, r.detail])).toEqual([
      ['owner', JSON.stringify({ owner: 'alice' })],
    ]);
  });

  it('token owner --rotate for owner `owner` rewrites owner.token, closes its sockets, and the terminal then uses the new one', async () => {
    const before = await track(OwnerSocket.open(d));
    const aliceBot = await track(bearerSocket(d, alice.token));
    const r = await runCli(['token', 'owner', '--rotate', '--data-dir', d.dataDir]);
    expect(r.code).toBe(0);
    const token = readFileSync(join(d.dataDir, 'owner.token'), 'utf8').trim();
    expect(token).not.toBe(d.ownerToken);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${d.url}/login#token=${token}`);
    await waitFor(() => before.closeCode !== undefined, 'owner’s old socket to close');
    expect(before.closeCode).toBe(1008);
    expect(aliceBot.closeCode).toBeUndefined();
    expect(await loginStatus(d.ownerToken)).toBe(401);
    d.ownerToken = token;
    const list = await runCli(['list', '--data-dir', d.dataDir]);
    expect(list.code).toBe(0);
  });
});

describe('[c9.rotate] a fixed owner token', () => {
  it('token owner --rotate exits 2 naming OGF_BROKER_OWNER_TOKEN when it fixes owner `owner`', async () => {
    const fixed = 'fixed-owner-token-fixed-owner-token-0123';
    const dataDir = makeDataDir('ogf-owners-fixed-');
    const other = await startDaemon({ dataDir, env: { OGF_BROKER_OWNER_TOKEN: fixed } });
    try {
      const r = await runCli(['token', 'owner', '--rotate', '--data-dir', dataDir], {
        OGF_BROKER_OWNER_TOKEN: fixed,
      });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('OGF_BROKER_OWNER_TOKEN');
      expect(r.stderr).not.toContain(fixed);
      // Nothing changed: the fixed token still opens the socket.
      expect(await upgradeStatus(other, { Authorization: `Bearer ${fixed}` })).toBe(101);
    } finally {
      await other.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
