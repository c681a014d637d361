/**
 * Grants through the real daemon (contracts.md 8, 5, 1.1): real owner sockets make, use and end them, real
 * MCP clients (two client tokens) hit them, the real `mark` command counts launches, and the real CLI
 * lists, adds and revokes. A restart keeps grants and their counts.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { makeClientToken } from './helpers/mcp.js';
import {
  type Frame,
  mcpClient,
  OwnerSocket,
  ownerCatalog,
  readMarks,
  upgradeStatus,
} from './helpers/owner.js';

let dataDir: string;
let markFile: string;
let d: RunningDaemon;
let ai: Client;
let bot: Client;
let owner: OwnerSocket;
let watcher: OwnerSocket;
const CONFIG_GRANT = { command: 'mark', client: '*', args: { word: 'cfg' }, note: 'from the config' };

function config() {
  return ownerCatalog(markFile, { grants: [CONFIG_GRANT] });
}

async function clientWith(token: string): Promise<Client> {
  const c = new LegacyClient({ name: 'grants-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(d.info.mcp_url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

/** run_command_wait for `mark` with a wait long enough for a grant-approved one to finish. */
async function mark(client: Client, word: string, wait = 20): Promise<Frame> {
  const r = (await client.callTool({
    name: 'run_command_wait',
    arguments: { command: 'mark', args: { word }, wait_seconds: wait },
  })) as CallToolResult;
  return r.structuredContent as Frame;
}

async function grant(frame: Frame, o: OwnerSocket = owner): Promise<Frame> {
  const r = await o.request({ type: 'grant', ...frame });
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return r.grant as Frame;
}

function decidedBy(s: OwnerSocket, id: string): Promise<Frame> {
  return s.view(id, (v) => v.decided_by !== undefined, `decided_by of ${id}`);
}

beforeAll(async () => {
  dataDir = makeDataDir('ogf-grants-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: config() });
  ai = await mcpClient(d);
  bot = await clientWith(await makeClientToken(d, 'bot'));
  owner = await OwnerSocket.open(d);
  watcher = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await watcher?.close();
  await ai?.close();
  await bot?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('[c8.match] grants approve matching requests without asking', () => {
  it('the snapshot lists every live grant (here the config one) and the grant frame creates one that every owner hears of', async () => {
    const snap = owner.frames.find((f) => f.type === 'snapshot')!;
    expect(snap.grants).toEqual([
      expect.objectContaining({
        command: 'mark',
        client: '*',
        args: { word: 'cfg' },
        source: 'config',
        created_by: 'config',
        state: 'live',
      }),
    ]);
    expect(snap.grants[0].id).toMatch(/^g_cfg_[A-Za-z0-9_-]+$/);
    const g = await grant({
      command: 'mark',
      client: 'local',
      args: { word: 'twice' },
      ttl_s: 900,
      uses: 2,
      note: 'two marks',
    });
    expect(g).toMatchObject({
      state: 'live',
      source: 'owner',
      created_by: 'owner',
      uses_left: 2,
      note: 'two marks',
    });
    expect(g.id).toMatch(/^g_[A-Za-z0-9_-]{8,62}$/);
    expect(Date.parse(g.expires_at) - Date.parse(g.created_at)).toBe(900_000);
    expect(g).not.toHaveProperty('ended_at');
    await watcher.waitFor(
      (f) => f.type === 'grant_upsert' && f.grant.id === g.id,
      'grant_upsert on the other owner',
    );

    // Same args, 2 uses: two pass without a click, the third waits.
    const first = await mark(ai, 'twice');
    const second = await mark(ai, 'twice');
    expect(first).toMatchObject({ status: 'SUCCEEDED' });
    expect(second).toMatchObject({ status: 'SUCCEEDED' });
    const third = await mark(ai, 'twice', 0);
    expect(third).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    expect(readMarks(markFile).filter((m) => m === 'twice')).toHaveLength(2);
    for (const r of [first, second]) {
      const v = await decidedBy(watcher, r.pending_id);
      expect(v.decided_by).toBe(`grant:${g.id}`);
    }
    // Owners never saw version 1 of a grant-approved command: its first upsert is version 2, approved.
    const firstSeen = watcher.frames.find((f) => f.type === 'upsert' && f.command.id === first.pending_id)!;
    expect(firstSeen.command).toMatchObject({ version: 2, state: 'approved', decided_by: `grant:${g.id}` });
    // Uses counted down in commit order: 1 left, then spent.
    const counts = watcher.frames
      .filter((f) => f.type === 'grant_upsert' && f.grant.id === g.id)
      .map((f) => [f.grant.state, f.grant.uses_left]);
    expect(counts).toEqual([
      ['live', 2],
      ['live', 1],
      ['spent', 0],
    ]);
  });

  it('any args for * matches another client; another command or other args are not matched', async () => {
    const g = await grant({ command: 'mark', client: '*', ttl_s: 900 });
    expect(g).not.toHaveProperty('args');
    const fromBot = await mark(bot, 'botword');
    expect(fromBot).toMatchObject({ status: 'SUCCEEDED' });
    expect((await decidedBy(owner, fromBot.pending_id)).decided_by).toBe(`grant:${g.id}`);
    const r = await owner.request({ type: 'revoke', grant_id: g.id });
    expect(r).toMatchObject({ ok: true, grant: { state: 'revoked' } });

    const narrow = await grant({ command: 'mark', client: 'local', args: { word: 'only' }, ttl_s: 900 });
    expect(await mark(bot, 'only', 0)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    expect(await mark(ai, 'other', 0)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    const stubborn = (await ai.callTool({
      name: 'run_command_wait',
      arguments: { command: 'stubborn', args: {}, wait_seconds: 0 },
    })) as CallToolResult;
    expect(stubborn.structuredContent).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    expect(await mark(ai, 'only')).toMatchObject({ status: 'SUCCEEDED' });
    await owner.request({ type: 'revoke', grant_id: narrow.id });
  });

  it('approve with grant: approved and granted in one step; the approval takes no use; later identical calls pass', async () => {
    const pending = await mark(ai, 'allowme', 0);
    const v = await owner.view(pending.pending_id, (x) => x.state === 'awaiting_review', 'the waiting card');
    const r = await owner.request({
      type: 'approve',
      id: v.id,
      version: v.version,
      grant: { same_args: true, ttl_s: 3600, uses: 1 },
    });
    expect(r).toMatchObject({
      ok: true,
      grant: { command: 'mark', client: 'local', args: { word: 'allowme' }, uses_left: 1 },
    });
    expect((await decidedBy(owner, v.id)).decided_by).toBe('owner');
    const again = await mark(ai, 'allowme');
    expect(again).toMatchObject({ status: 'SUCCEEDED' });
    expect((await decidedBy(owner, again.pending_id)).decided_by).toBe(`grant:${r.grant.id}`);
    expect(await mark(ai, 'allowme', 0)).toMatchObject({ status: 'PENDING' });
  });
});

describe('[c8.end] revoke and config grants', () => {
  it('revoke is immediate and does not touch what the grant already approved', async () => {
    const g = await grant({ command: 'mark', client: 'local', args: { word: 'rev' }, ttl_s: 900 });
    const done = await mark(ai, 'rev');
    expect(done).toMatchObject({ status: 'SUCCEEDED' });
    const r = await owner.request({ type: 'revoke', grant_id: g.id });
    expect(r.grant).toMatchObject({ state: 'revoked' });
    expect(r.grant.ended_at).toMatch(/Z$/);
    expect(await mark(ai, 'rev', 0)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    expect((await owner.request({ type: 'revoke', grant_id: g.id })).ok).toBe(true); // already ended: ok
    expect(await owner.request({ type: 'revoke', grant_id: 'g_no_such_grant' })).toMatchObject({
      ok: false,
      error: { code: 'NotFound' },
    });
    const stillDone = await owner.view(
      done.pending_id,
      (v) => v.state !== 'approved' && v.state !== 'running',
      'the approved one, finished',
    );
    expect(stillDone.state).toBe('succeeded');
  });

  it('a config grant approves, and is NotRevocable from the owner socket', async () => {
    expect(await mark(bot, 'cfg')).toMatchObject({ status: 'SUCCEEDED' });
    const id = owner.frames.find((f) => f.type === 'snapshot')!.grants[0].id as string;
    const r = await owner.request({ type: 'revoke', grant_id: id });
    expect(r).toMatchObject({ ok: false, error: { code: 'NotRevocable' } });
    expect(r.error.message).toMatch(/config/);
  });
});

describe('[c8.grantable] what cannot be granted', () => {
  it('ogf.cue and an unknown command are NotGrantable, and nothing is created', async () => {
    for (const command of ['ogf.cue', 'nosuch', 'notes__write_file']) {
      const r = await owner.request({ type: 'grant', command, client: '*', ttl_s: 900 });
      expect(r, command).toMatchObject({ ok: false, error: { code: 'NotGrantable' } });
    }
    const list = await owner.request({ type: 'grants', all: true });
    expect(list.grants.map((g: Frame) => g.command)).not.toContain('ogf.cue');
  });

  it('bad grant frames get BadMessage naming the field', async () => {
    const cases: Array<[Frame, RegExp]> = [
      [
        { type: 'grant', command: 'mark', client: '*', ttl_s: 59 },
        /^ttl_s must be an integer number of seconds from 60 to 2592000, got 59/,
      ],
      [{ type: 'grant', command: 'mark', client: '*', ttl_s: 2592001 }, /^ttl_s must be/],
      [{ type: 'grant', command: 'mark', client: '*' }, /^ttl_s must be/],
      [
        { type: 'grant', command: 'mark', client: '*', ttl_s: 60, uses: 0 },
        /^uses must be an integer from 1 to 10000, got 0/,
      ],
      [{ type: 'grant', command: 'mark', client: 'Not A Name', ttl_s: 60 }, /^client must be a client name/],
      [{ type: 'grant', command: 'mark', client: '*', ttl_s: 60, args: [1] }, /^args must be an object/],
      [{ type: 'grant', command: 'mark', client: '*', ttl_s: 60, note: 'a\u202eb' }, /^note must be/],
      [{ type: 'grant', command: 'mark', client: '*', ttl_s: 60, extra: 1 }, /extra: unknown field/],
      [{ type: 'revoke', grant_id: 'short' }, /^grant_id must be a grant id/],
      [
        { type: 'approve', id: 'c_whatever1', version: 1, grant: { ttl_s: 60 } },
        /^grant.same_args must be true/,
      ],
      [{ type: 'approve', id: 'c_whatever1', version: 1, grant: 'yes' }, /^grant must be an object/],
    ];
    for (const [frame, message] of cases) {
      const r = await owner.request(frame);
      expect(r, JSON.stringify(frame)).toMatchObject({ ok: false, error: { code: 'BadMessage' } });
      expect(r.error.message, JSON.stringify(frame)).toMatch(message);
    }
  });
});

describe('[c8.owner-only] no MCP surface can create, see or end a grant', () => {
  it('every tool, called with grant-shaped input, creates none; the owner socket refuses an MCP token', async () => {
    const before = (await owner.request({ type: 'grants', all: true })).grants.length;
    const { tools } = await ai.listTools();
    const names = tools.map((t) => t.name);
    expect(names.filter((n) => /grant|revoke/i.test(n))).toEqual([]);
    const grantish = {
      grant: { same_args: false, ttl_s: 3600 },
      type: 'grant',
      command: 'mark',
      client: '*',
      ttl_s: 3600,
    };
    for (const name of names) {
      const r = (await ai.callTool({
        name,
        arguments: { ...grantish, args: { word: 'x' }, wait_seconds: 0 },
      })) as CallToolResult;
      expect(JSON.stringify(r), name).not.toMatch(/"g_[A-Za-z0-9_-]{8,}"|uses_left|expires_at/);
    }
    expect((await owner.request({ type: 'grants', all: true })).grants.length).toBe(before);
    expect(await upgradeStatus(d, { Authorization: `Bearer ${d.mcpToken}` })).toBe(401);
  });
});

describe('[c8.end] the terminal and a restart', () => {
  it('grant add / list / revoke through the real CLI', async () => {
    const env = { OGF_BROKER_DATA_DIR: dataDir };
    const add = await runCli(
      [
        'grant',
        'add',
        '--command',
        'mark',
        '--client',
        'bot',
        '--args',
        '{"word":"cli"}',
        '--ttl-s',
        '600',
        '--uses',
        '5',
        '--note',
        'from the terminal',
      ],
      env,
    );
    expect(add.code, add.stderr).toBe(0);
    const id = add.stdout.trim().split('\n').at(-1)!;
    expect(id).toMatch(/^g_[A-Za-z0-9_-]+$/);
    const list = await runCli(['grant', 'list'], env);
    expect(list.code).toBe(0);
    const line = list.stdout.split('\n').find((l) => l.startsWith(id))!;
    // Contract 16 (v4): each grant names its node (here the one daemon's: its host name by default).
    expect(line).toMatch(
      /live {2}mark {2}client bot {2}args \{"word":"cli"\} {2}node [a-z][a-z0-9-]* {2}10 min left {2}5 uses left {2}by owner {2}note: from the terminal/,
    );
    expect(list.stdout).toMatch(
      /g_cfg_\S+ {2}live {2}mark {2}client \* {2}args \{"word":"cfg"\} {2}node [a-z][a-z0-9-]* {2}no expiry {2}by config/,
    );
    expect((await runCli(['grant', 'revoke', id], env)).stdout).toBe(`revoked ${id}\n`);
    const all = await runCli(['grant', 'list', '--all'], env);
    expect(all.stdout).toMatch(new RegExp(`${id} {2}revoked .* ended 20`));
    expect((await runCli(['grant', 'list'], env)).stdout).not.toContain(id);
    const cue = await runCli(
      ['grant', 'add', '--command', 'ogf.cue', '--client', '*', '--ttl-s', '600'],
      env,
    );
    expect(cue.code).toBe(1);
    expect(cue.stderr).toMatch(/^ogf-broker: NotGrantable: /);
    const bad = await runCli(['grant', 'add', '--command', 'mark', '--ttl-s', '600'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^ogf-broker: --client: required/);
    expect(
      (await runCli(['grant', 'add', '--command', 'mark', '--client', '*', '--ttl-s', '5'], env)).stderr,
    ).toMatch(/^ogf-broker: --ttl-s: must be an integer from 60 to 2592000, got "5"/);
  });

  it('a restart keeps grants and their counts', async () => {
    const g = await grant({ command: 'mark', client: 'local', args: { word: 'keep' }, ttl_s: 900, uses: 3 });
    expect(await mark(ai, 'keep')).toMatchObject({ status: 'SUCCEEDED' });
    await owner.close();
    await watcher.close();
    await ai.close();
    await bot.close();
    expect(await d.stop()).toBe(0);
    d = await startDaemon({ dataDir, config: config() });
    ai = await mcpClient(d);
    bot = await mcpClient(d);
    owner = await OwnerSocket.open(d);
    watcher = await OwnerSocket.open(d);
    const snap = owner.frames.find((f) => f.type === 'snapshot')!;
    const kept = snap.grants.find((x: Frame) => x.id === g.id);
    expect(kept).toMatchObject({ state: 'live', uses_left: 2 });
    expect(snap.grants.filter((x: Frame) => x.source === 'config')).toHaveLength(1);
    expect(await mark(ai, 'keep')).toMatchObject({ status: 'SUCCEEDED' });
    expect(await mark(ai, 'keep')).toMatchObject({ status: 'SUCCEEDED' });
    expect(await mark(ai, 'keep', 0)).toMatchObject({ status: 'PENDING' });
    expect(readMarks(markFile).filter((m) => m === 'keep')).toHaveLength(3);
  });
});
