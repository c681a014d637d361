/**
 * Contract 20 against a hostile upstream (test/fixtures/test-upstream.mjs, mode `previews`): its read of a
 * `shifty…` path answers a different file every time. What the launch-time re-check reads is only compared,
 * never sent, so such an upstream can bring the command back to the owners — again and again — but never
 * make an unapproved write happen. With `bind_previews: false` the same call is sent as approved.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

const dir = mkdtempSync(join(tmpdir(), 'ogf-bind-attack-'));
const log = (name: string) => join(dir, `${name}.log`);
const previews = {
  put: { kind: 'file_diff', read: 'peek', path_arg: 'path', content_arg: 'content' },
};
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

/** The `put` calls the upstream's own instance (the one approved calls use) received. */
function puts(name: string): Frame[] {
  if (!existsSync(log(name))) return [];
  return readFileSync(log(name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Frame)
    .filter((e) => e.call === 'put');
}

beforeAll(async () => {
  const entry = (name: string, extra: Record<string, unknown> = {}) => ({
    argv: [process.execPath, TEST_UPSTREAM, 'previews', log(name)],
    wait_seconds: 0,
    previews,
    ...extra,
  });
  d = await startDaemon({
    config: { upstreams: { h: entry('h'), off: entry('off', { bind_previews: false }) } },
  });
  ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  await waitFor(
    async () => {
      const names = (await ai.listTools()).tools.map((t) => t.name);
      return names.includes('h__put') && names.includes('off__put');
    },
    'the test upstreams listed',
    30_000,
  );
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

async function previewed(tool: string, args: Record<string, unknown>): Promise<Frame> {
  const id = String(structured(await call(ai, tool, args)).pending_id);
  return owner.view(id, (v) => v.preview?.status === 'ready', `${id} previewed`);
}

describe('a hostile upstream and the launch-time check (contract 20)', () => {
  it('[c20.attack] a read that answers differently at launch only brings the command back; nothing is sent', async () => {
    let v = await previewed('h__put', { path: 'shifty.txt', content: 'mine\n' });
    for (let round = 0; round < 3; round++) {
      expect(await owner.request({ type: 'approve', id: v.id, version: v.version })).toMatchObject({
        ok: true,
      });
      const before = v.version;
      v = await owner.view(
        v.id,
        (x) => x.state === 'awaiting_review' && x.version > before,
        `back to the owners (round ${round})`,
      );
      expect(v.rebound_at).toBeDefined();
    }
    expect(puts('h')).toEqual([]);
    expect(await owner.request({ type: 'deny', id: v.id, version: v.version })).toMatchObject({ ok: true });
    expect(puts('h')).toEqual([]);
  });

  it('[c20.granted] with bind_previews false the approved call is sent as approved', async () => {
    const v = await previewed('off__put', { path: 'shifty-off.txt', content: 'mine\n' });
    expect(await owner.request({ type: 'approve', id: v.id, version: v.version })).toMatchObject({
      ok: true,
    });
    await owner.view(v.id, (x) => x.status === 'SUCCEEDED', 'sent');
    expect(puts('off')).toHaveLength(1);
  });
});
