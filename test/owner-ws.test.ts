/**
 * The owner WebSocket over real sockets against the real daemon (contracts.md 5, rules 5 and 8): greeting,
 * approval races, version conflicts, malformed and oversized frames, the upgrade refusals in their order,
 * ordered fan-out to every owner, reconnect resync and history.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import {
  callTool,
  mcpClient,
  OwnerSocket,
  ownerCatalog,
  queue,
  readMarks,
  upgradeStatus,
} from './helpers/owner.js';
import { openPanelSocket, panelLogin, panelProtocols } from './helpers/panel.js';

let d: RunningDaemon;
let ai: Client;
let markFile: string;
const sockets: OwnerSocket[] = [];

async function owner(headers?: Record<string, string>): Promise<OwnerSocket> {
  const s = await OwnerSocket.open(d, headers);
  sockets.push(s);
  return s;
}

function marks(): string[] {
  return readMarks(markFile);
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-owner-ws-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
  ai = await mcpClient(d);
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('owner WebSocket', () => {
  it('greets with hello (naming the owner) then snapshot, the snapshot holding waiting commands as Views', async () => {
    const id = await queue(ai, 'mark', { word: 'greet' }, 'to test the greeting');
    const o = await owner();
    expect(o.frames[0]).toMatchObject({ type: 'hello', protocol: 'ogf-broker-owner/1', owner: 'owner' });
    expect(o.frames[0]?.server_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(o.frames[1]?.type).toBe('snapshot');
    const v = o.snapshotView(id);
    expect(v).toMatchObject({
      id,
      version: 1,
      tool: 'run_command_wait',
      command: 'mark',
      client: 'local',
      state: 'awaiting_review',
      status: 'PENDING',
      phase: 'awaiting_review',
      justification: 'to test the greeting',
      args: { word: 'greet' },
    });
    expect(v?.display).toContain('greet');
    expect(o.binaryFrames).toBe(0); // JSON text frames (contract 5), the fragmented snapshot too
  });

  it('[c2.rule-5] two owners approving the same command at once: one launch, one AlreadyDecided', async () => {
    const id = await queue(ai, 'mark', { word: 'race' });
    const [a, b] = [await owner(), await owner()];
    const version = a.snapshotView(id)?.version;
    const replies = await Promise.all([
      a.request({ type: 'approve', id, version }),
      b.request({ type: 'approve', id, version }),
    ]);
    const oks = replies.filter((r) => r.ok === true);
    const refused = replies.filter((r) => r.ok === false);
    expect(oks).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.error.code).toBe('AlreadyDecided');
    expect(refused[0]?.error.message).toEqual(expect.any(String));
    await a.upsert(id, (v) => v.status === 'SUCCEEDED', 'SUCCEEDED');
    expect(marks().filter((l) => l === 'race')).toHaveLength(1);
  });

  it('[c2.rule-8] a stale version gets VersionConflict and changes nothing; an unknown id gets NotFound', async () => {
    const id = await queue(ai, 'mark', { word: 'stale' });
    const o = await owner();
    const version = o.snapshotView(id)?.version as number;
    const r = await o.request({ type: 'approve', id, version: version + 1 });
    expect(r).toMatchObject({ type: 'reply', ok: false, error: { code: 'VersionConflict' } });
    const r2 = await o.request({ type: 'deny', id, version: version + 5, note: 'x' });
    expect(r2.error.code).toBe('VersionConflict');
    expect(o.frames.some((f) => f.type === 'upsert' && f.command.id === id)).toBe(false);
    const nf = await o.request({ type: 'approve', id: 'c_doesnotexist00', version: 1 });
    expect(nf.error.code).toBe('NotFound');
    const nr = await o.request({ type: 'reconcile', id: 'c_doesnotexist00', outcome: 'delivered' });
    expect(nr.error.code).toBe('NotFound');
    const ok = await o.request({ type: 'deny', id, version });
    expect(ok).toMatchObject({ ok: true });
  });

  it('[c2.rule-1] a deny note reaches the AI as owner_note; deciding a decided command is AlreadyDecided', async () => {
    const id = await queue(ai, 'mark', { word: 'denied' });
    const o = await owner();
    const version = o.snapshotView(id)?.version;
    expect(await o.request({ type: 'deny', id, version, note: 'not now, please' })).toMatchObject({
      ok: true,
    });
    const v = await o.upsert(id, (c) => c.status === 'DENIED', 'DENIED');
    expect(v.reason).toBe('OwnerDenied');
    const result = await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 });
    expect(result).toMatchObject({ status: 'DENIED', reason: 'OwnerDenied', owner_note: 'not now, please' });
    const again = await o.request({ type: 'approve', id, version: v.version });
    expect(again.error.code).toBe('AlreadyDecided');
    // AlreadyDecided is checked before the version (contract 5).
    const stale = await o.request({ type: 'approve', id, version: 1 });
    expect(stale.error.code).toBe('AlreadyDecided');
    const rec = await o.request({ type: 'reconcile', id, outcome: 'delivered' });
    expect(rec.error.code).toBe('NotReconcilable');
    expect(marks()).not.toContain('denied');
  });

  it('[c3.2.bad-input] malformed, unknown and schema-failing frames get BadMessage and the socket stays open', async () => {
    const o = await owner();
    const notJson = await o.sendRaw('{not json');
    expect(notJson).toEqual({
      type: 'reply',
      req_id: null,
      ok: false,
      error: { code: 'BadMessage', message: expect.any(String) },
    });
    const unknown = await o.sendRaw(JSON.stringify({ type: 'launch', req_id: 'u1' }));
    expect(unknown).toMatchObject({ req_id: 'u1', ok: false, error: { code: 'BadMessage' } });
    expect(unknown.error.message).toMatch(/type must be one of approve, deny, reconcile, history/);
    const badVersion = await o.sendRaw(
      JSON.stringify({ type: 'approve', req_id: 'u2', id: 'c_abcdefghij', version: '1' }),
    );
    expect(badVersion).toMatchObject({ req_id: 'u2', error: { code: 'BadMessage' } });
    expect(badVersion.error.message).toMatch(/^version must be/);
    const badOutcome = await o.sendRaw(
      JSON.stringify({ type: 'reconcile', req_id: 'u3', id: 'c_abcdefghij', outcome: 'maybe' }),
    );
    expect(badOutcome.error.message).toMatch(/^outcome must be one of delivered, not_delivered/);
    const extra = await o.sendRaw(JSON.stringify({ type: 'history', req_id: 'u4', limit: 1, sneaky: true }));
    expect(extra).toMatchObject({ req_id: 'u4', error: { code: 'BadMessage' } });
    const bigLimit = await o.sendRaw(JSON.stringify({ type: 'history', req_id: 'u5', limit: 501 }));
    expect(bigLimit.error.message).toMatch(/^limit must be/);
    const longReq = await o.sendRaw(JSON.stringify({ type: 'history', req_id: 'x'.repeat(65) }));
    expect(longReq).toMatchObject({ req_id: null, error: { code: 'BadMessage' } });
    const array = await o.sendRaw('[1,2]');
    expect(array).toMatchObject({ req_id: null, error: { code: 'BadMessage' } });
    o.ws.send(Buffer.from('{}'), { binary: true });
    await o.waitFor((f) => f.type === 'reply' && /binary/.test(f.error?.message ?? ''), 'binary refusal');
    // Still open and serving.
    const h = await o.request({ type: 'history', limit: 1 });
    expect(h.type).toBe('history');
    expect(o.closeCode).toBeUndefined();
  });

  it('a frame over 64 KiB closes the connection with 1009; one just under is answered', async () => {
    const o = await owner();
    const under = JSON.stringify({ type: 'history', req_id: 'big', pad: 'x'.repeat(60_000) });
    expect((await o.sendRaw(under)).error.code).toBe('BadMessage');
    o.ws.send(JSON.stringify({ type: 'history', req_id: 'huge', pad: 'x'.repeat(65 * 1024) }));
    await waitFor(() => o.closeCode !== undefined, 'close');
    expect(o.closeCode).toBe(1009);
  });

  it('[c3.auth] [c5.origin] [c5.host] refuses upgrades: no or wrong auth 401, foreign Origin 403 (after auth), foreign Host 403 (first)', async () => {
    const bearer = { Authorization: `Bearer ${d.ownerToken}` };
    const login = await panelLogin(d);
    const other = await panelLogin(d);
    const keyed = (key: string) => ({ 'Sec-WebSocket-Protocol': panelProtocols(key).join(', ') });
    expect(await upgradeStatus(d, {})).toBe(401);
    // A browser session: the cookie together with its own key, nothing less (contract 5 v2).
    expect(await upgradeStatus(d, { Cookie: login.cookie, ...keyed(login.key), Origin: d.url })).toBe(101);
    expect(await upgradeStatus(d, { Cookie: login.cookie, ...keyed(login.key) })).toBe(101);
    expect(await upgradeStatus(d, { Cookie: login.cookie, Origin: d.url })).toBe(401);
    expect(await upgradeStatus(d, { Cookie: login.cookie, ...keyed(other.key), Origin: d.url })).toBe(401);
    expect(await upgradeStatus(d, { ...keyed(login.key), Origin: d.url })).toBe(401);
    expect(
      await upgradeStatus(d, { Cookie: login.cookie, 'Sec-WebSocket-Protocol': 'ogf-owner', Origin: d.url }),
    ).toBe(401);
    expect(
      await upgradeStatus(d, { Cookie: login.cookie, ...keyed(login.key), Origin: 'http://127.0.0.1:1' }),
    ).toBe(403);
    const panel = await openPanelSocket(d, login);
    expect(panel.ws.protocol).toBe('ogf-owner'); // the key is not echoed back
    expect(panel.frames[0]).toMatchObject({ type: 'hello', owner: 'owner' });
    await panel.close();
    expect(await upgradeStatus(d, { Authorization: 'Bearer wrong-token-wrong-token-wrong-token' })).toBe(401);
    expect(await upgradeStatus(d, { Authorization: `Bearer ${d.mcpToken}` })).toBe(401);
    expect(await upgradeStatus(d, { Cookie: 'ogf_owner_session=forged' })).toBe(401);
    expect(await upgradeStatus(d, { ...bearer, Origin: 'http://evil.example' })).toBe(403);
    // Order: auth before Origin, Host before everything.
    expect(await upgradeStatus(d, { Origin: 'http://evil.example' })).toBe(401);
    expect(await upgradeStatus(d, { Host: 'evil.example', Origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(d, { ...bearer, Host: 'rebind.example:80' })).toBe(403);
    expect(await upgradeStatus(d, { ...bearer, Origin: d.url })).toBe(101);
    expect(await upgradeStatus(d, bearer)).toBe(101);
  });

  it('[c2.rule-8] upserts reach every owner, in commit order, with increasing versions', async () => {
    const [a, b, c] = [await owner(), await owner(), await owner()];
    const id = await queue(ai, 'mark', { word: 'fanout' });
    const created = await a.upsert(id, (v) => v.version === 1, 'created');
    expect((await a.request({ type: 'approve', id, version: created.version })).ok).toBe(true);
    for (const o of [a, b, c]) await o.upsert(id, (v) => v.status === 'SUCCEEDED', 'SUCCEEDED');
    const seq = (o: OwnerSocket) =>
      o.frames
        .filter((f) => f.type === 'upsert' && f.command.id === id)
        .map((f) => [f.command.version, f.command.state]);
    const expected = seq(a);
    expect(expected.map(([, s]) => s)).toEqual(['awaiting_review', 'approved', 'running', 'succeeded']);
    expect(expected.map(([v]) => v)).toEqual([1, 2, 3, 4]);
    expect(seq(b)).toEqual(expected);
    expect(seq(c)).toEqual(expected);
    // The reply to approve comes after the upsert it caused.
    const approvedAt = a.frames.findIndex(
      (f) => f.type === 'upsert' && f.command.id === id && f.command.state === 'approved',
    );
    const replyAt = a.frames.findIndex((f) => f.type === 'reply' && f.ok === true);
    expect(approvedAt).toBeLessThan(replyAt);
  });

  it('a reconnecting owner resyncs from a fresh snapshot and misses nothing', async () => {
    const first = await owner();
    await first.close();
    const decided = await queue(ai, 'mark', { word: 'whileaway' });
    const other = await owner();
    await other.request({ type: 'approve', id: decided, version: 1 });
    await other.upsert(decided, (v) => v.status === 'SUCCEEDED', 'SUCCEEDED');
    const waiting = await queue(ai, 'mark', { word: 'stillwaiting' });
    const again = await owner();
    expect(again.snapshotView(decided)).toMatchObject({ status: 'SUCCEEDED', version: 4 });
    expect(again.snapshotView(waiting)).toMatchObject({ status: 'PENDING', state: 'awaiting_review' });
  });

  it('history answers newest first, honours limit and before', async () => {
    const o = await owner();
    const all = await o.request({ type: 'history', limit: 500 });
    expect(all.commands.length).toBeGreaterThanOrEqual(5);
    const created = all.commands.map((v: { created_at: string }) => v.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const two = await o.request({ type: 'history', limit: 2 });
    expect(two.commands.map((v: { id: string }) => v.id)).toEqual(
      all.commands.slice(0, 2).map((v: { id: string }) => v.id),
    );
    const older = await o.request({ type: 'history', limit: 2, before: two.commands[1].id });
    expect(older.commands.map((v: { id: string }) => v.id)).toEqual(
      all.commands.slice(2, 4).map((v: { id: string }) => v.id),
    );
    expect(o.binaryFrames).toBe(0);
  });
});
