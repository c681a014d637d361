/**
 * The owner frames of contract 14 over a real owner socket: `audit` answers `{…,"entries":[…]}` with the
 * command's chained entries, `command_ids` with `format: "jsonl"` gives the export of several commands;
 * `history` with `text`, `state`, `client`, `since`, `until` searches; bad fields get `BadMessage` naming
 * the field and what it accepts, and the socket stays open.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let one: string;
let two: string;

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-audit-frames-');
  d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks.txt')) });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  one = await queue(ai, 'mark', { word: 'first' });
  two = await queue(ai, 'mark', { word: 'second' });
  await owner.view(two, (v) => v.version === 1, 'two waiting');
  await owner.request({ type: 'deny', id: one, version: 1, note: 'wrong file' });
  await owner.request({ type: 'deny', id: two, version: 1 });
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

describe('[c14.frames] the audit and history-search owner frames', () => {
  it('answers a command’s entries, and the JSONL of several', async () => {
    const r = await owner.request({ type: 'audit', command_id: one });
    expect(r).toMatchObject({ type: 'audit', command_id: one });
    expect((r.entries as Frame[]).map((e) => [e.event, e.actor, e.data.note])).toEqual([
      ['submit', 'client:local', undefined],
      ['deny', 'owner', 'wrong file'],
    ]);
    for (const e of r.entries as Frame[])
      expect(Object.keys(e).sort()).toEqual([
        'actor',
        'at',
        'command_id',
        'data',
        'event',
        'hash',
        'prev',
        'seq',
      ]);
    const x = await owner.request({ type: 'audit', command_ids: [one, two], format: 'jsonl' });
    const lines = (x.jsonl as string)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Frame);
    expect(lines.filter((l) => l.type === undefined)).toHaveLength(4);
    expect(lines.at(-1)).toEqual({ type: 'export', command_ids: [one, two] });
    expect((await owner.request({ type: 'audit', command_id: 'c_nosuchcommand' })).entries).toEqual([]);
  });

  it('searches the history', async () => {
    const ids = async (f: Frame) =>
      ((await owner.request({ type: 'history', ...f })).commands as Frame[]).map((c) => c.id);
    expect(await ids({ text: 'WRONG FILE' })).toEqual([one]);
    expect(await ids({ text: 'second' })).toEqual([two]);
    expect(await ids({ state: 'denied', client: 'local' })).toEqual([two, one]);
    expect(await ids({ state: 'succeeded' })).toEqual([]);
    expect(await ids({ since: '2100-01-01T00:00:00Z' })).toEqual([]);
    expect(await ids({ until: '2100-01-01', text: 'mark', limit: 1 })).toEqual([two]);
    expect(await ids({ text: 'mark', before: two })).toEqual([one]);
    // Contract 16: the node that received it (broker.db: this daemon's, named after the host by default).
    const node = (await owner.request({ type: 'history' })).commands[0].node as string;
    expect(node).toMatch(/^[a-z][a-z0-9-]{0,31}$/);
    expect(await ids({ node })).toEqual([two, one]);
    expect(await ids({ node: 'not-this-node' })).toEqual([]);
  });

  it('refuses bad fields with BadMessage naming them', async () => {
    const bad: Array<[Frame, RegExp]> = [
      [{ type: 'history', state: 'gone' }, /^state must be one of awaiting_review/],
      [{ type: 'history', since: 'yesterday' }, /^since must be an ISO-8601 time/],
      [{ type: 'history', text: 'x'.repeat(201) }, /^text must be a string of at most 200/],
      [{ type: 'history', node: 'Not A Node' }, /^node must be a node name/],
      [{ type: 'audit' }, /command_id must be a pending_id string, or command_ids/],
      [{ type: 'audit', command_id: one, command_ids: [one] }, /exactly one of the two/],
      [{ type: 'audit', command_ids: [] }, /^command_ids must be an array of 1 to 500/],
      [{ type: 'audit', command_id: one, format: 'csv' }, /^format must be jsonl/],
    ];
    for (const [frame, message] of bad) {
      const r = await owner.request(frame);
      expect(r, JSON.stringify(frame)).toMatchObject({
        type: 'reply',
        ok: false,
        error: { code: 'BadMessage' },
      });
      expect(r.error.message).toMatch(message);
    }
    expect(owner.closeCode).toBeUndefined();
  });
});
