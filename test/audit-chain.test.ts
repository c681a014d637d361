/**
 * The audit chain over a real history of every entry kind (contract 14): a real daemon, a real MCP client,
 * real owner sockets, the real CLI. Submits approved, denied, cancelled, expired, granted; a launch and its
 * outcome, a failure reconciled; grants made, used and ended; a refused cue; owner login, logout and a
 * refused login; tokens created and rotated. Then the chain is recomputed from broker.db as an outsider
 * would (seq from 1 without gaps, prev links, SHA-256 of RFC 8785 JSON), every event is in it with who did
 * it, no entry holds a token, a cookie, a session UUID or a panel key, and `ogf-broker audit verify` says ok.
 */
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { callTool, type Frame, mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';
import { panelLogin } from './helpers/panel.js';

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
const secrets: Record<string, string> = {};

/** The chain recomputed from the file: throws at the first entry that does not hold. */
function chainOf(dataDir: string): Frame[] {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT entry, hash FROM audit ORDER BY seq').all() as Array<{
      entry: string;
      hash: string;
    }>;
    let prev = '0'.repeat(64);
    return rows.map((r, i) => {
      const e = JSON.parse(r.entry) as Frame;
      expect(Object.keys(e).sort()).toEqual(
        ['actor', 'at', 'data', 'event', 'prev', 'seq', ...('command_id' in e ? ['command_id'] : [])].sort(),
      );
      expect(e.seq).toBe(i + 1);
      expect(e.prev).toBe(prev);
      expect(r.hash).toBe(createHash('sha256').update(canonicalize(e)!).digest('hex'));
      prev = r.hash;
      return { ...e, hash: r.hash };
    });
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-audit-chain-');
  const config = ownerCatalog(join(dataDir, 'marks.txt'), { review_timeout_s: 10 });
  (config.commands as Frame).fail = {
    description: 'Fails for sure',
    argv: [process.execPath, '-e', 'process.exit(3)'],
    timeout_s: 10,
  };
  d = await startDaemon({ dataDir, config });
  secrets.owner = d.ownerToken;
  secrets.mcp = d.mcpToken;
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

describe('[c14.chain] a real history of every entry kind, chained', () => {
  it('records each event with who or what did it, and verifies', async () => {
    const expiring = await queue(ai, 'mark', { word: 'late' });
    // Approved by an owner, launched, succeeded.
    const one = await queue(ai, 'mark', { word: 'one' });
    await owner.view(one, (v) => v.version === 1, 'one waiting');
    expect(await owner.request({ type: 'approve', id: one, version: 1 })).toMatchObject({ ok: true });
    await owner.view(one, (v) => v.status === 'SUCCEEDED', 'one ran');
    // Denied with a note.
    const two = await queue(ai, 'mark', { word: 'two' });
    await owner.view(two, (v) => v.version === 1, 'two waiting');
    await owner.request({ type: 'deny', id: two, version: 1, note: 'not now' });
    // Cancelled by the client.
    const three = await queue(ai, 'mark', { word: 'three' });
    await callTool(ai, 'cancel_command', { pending_id: three });
    // Failed, then reconciled.
    const four = await queue(ai, 'fail', {});
    await owner.view(four, (v) => v.version === 1, 'four waiting');
    await owner.request({ type: 'approve', id: four, version: 1 });
    await owner.view(four, (v) => v.status === 'ERROR', 'four failed');
    await owner.request({ type: 'reconcile', id: four, outcome: 'not_delivered', note: 'checked' });
    // A grant made, used and revoked.
    const g = await owner.request({ type: 'grant', command: 'mark', client: '*', ttl_s: 600 });
    const five = await queue(ai, 'mark', { word: 'five' });
    await owner.view(five, (v) => v.status === 'SUCCEEDED', 'five ran by the grant');
    await owner.request({ type: 'revoke', grant_id: g.grant.id });
    // A cue with the feature off.
    const session = randomUUID();
    secrets.session = session;
    await callTool(ai, 'ogf_cue', {
      session_id: session,
      action: 'wave',
      emotion: 'happy',
      intensity: 0.5,
      gaze: 'user',
    });
    // Owner login, logout, a refused login.
    const login = await panelLogin(d);
    secrets.cookie = login.cookie.split('=')[1]!;
    secrets.key = login.key;
    const out = await fetch(`${d.url}/logout`, {
      method: 'POST',
      headers: { Cookie: login.cookie, Origin: d.url, 'x-ogf-owner-key': login.key },
    });
    expect(out.status).toBe(200);
    const wrong = 'w'.repeat(43);
    secrets.wrong = wrong;
    await fetch(`${d.url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: wrong }),
    });
    // Tokens created and rotated, by the CLI beside the running daemon.
    for (const args of [
      ['token', 'mcp', '--client', 'bot'],
      ['token', 'mcp', '--client', 'bot', '--rotate'],
      ['token', 'owner', '--name', 'alice'],
      ['token', 'owner', '--name', 'alice', '--rotate'],
    ]) {
      const r = await runCli([...args, '--data-dir', d.dataDir]);
      expect(r.code, r.stderr).toBe(0);
      secrets[args.join(' ')] = r.stdout
        .trimEnd()
        .split('\n')
        .at(-1)!
        .replace(/^.*#token=/, '');
    }
    await owner.view(expiring, (v) => v.status === 'DENIED', 'the first request expired');

    const chain = chainOf(d.dataDir);
    const of = (id: string) => chain.filter((e) => e.command_id === id).map((e) => [e.event, e.actor]);
    expect(of(one)).toEqual([
      ['submit', 'client:local'],
      ['approve', 'owner'],
      ['launch', 'daemon'],
      ['outcome', 'daemon'],
    ]);
    expect(of(two)).toEqual([
      ['submit', 'client:local'],
      ['deny', 'owner'],
    ]);
    expect(chain.find((e) => e.command_id === two && e.event === 'deny')!.data).toMatchObject({
      note: 'not now',
    });
    expect(of(three)).toEqual([
      ['submit', 'client:local'],
      ['deny', 'client:local'],
    ]);
    expect(of(four)).toEqual([
      ['submit', 'client:local'],
      ['approve', 'owner'],
      ['launch', 'daemon'],
      ['outcome', 'daemon'],
      ['reconcile', 'owner'],
    ]);
    expect(of(five)).toEqual([
      ['submit', 'client:local'],
      ['approve', `grant:${g.grant.id}`],
      ['grant_used', 'daemon'],
      ['launch', 'daemon'],
      ['outcome', 'daemon'],
    ]);
    expect(of(expiring)).toEqual([
      ['submit', 'client:local'],
      ['deny', 'daemon'],
    ]);
    const events = chain.map((e) => `${e.event} ${e.actor}`);
    for (const want of [
      'grant_created owner',
      'grant_ended owner',
      'cue_refused client:local',
      'owner_login owner',
      'owner_logout owner',
      'owner_login_refused anonymous',
      'token_created owner',
      'token_rotated owner',
    ]) {
      expect(events).toContain(want);
    }
    // No entry holds a token, a cookie, a session UUID (any case, with or without dashes) or a panel key.
    const text = JSON.stringify(chain);
    for (const [name, s] of Object.entries(secrets)) {
      for (const form of [s, s.toLowerCase(), s.toUpperCase(), s.replace(/-/g, '')]) {
        expect(text.includes(form), `${name} in the audit chain`).toBe(false);
      }
    }
    const v = await runCli(['audit', 'verify', '--data-dir', d.dataDir]);
    expect(v.stdout.trim()).toBe(`ok: ${chain.length} entries, 0 checkpoints, 0 passkey approvals verified`);
    expect(v.code).toBe(0);
  }, 60_000);
});
