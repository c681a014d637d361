/**
 * Contract 12 across a restart: a call still awaiting review whose preview was being computed when the
 * daemon stopped gets it computed again at the next start (the stored `pending` is not left for ever), as a
 * same-version upsert. Real daemon restarted on the same data dir, real test upstream over stdio.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, structured } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

const dir = mkdtempSync(join(tmpdir(), 'ogf-previews-restart-'));
const log = join(dir, 'gate.log');
const config = {
  upstreams: {
    gate: {
      argv: [process.execPath, TEST_UPSTREAM, 'previews', log],
      wait_seconds: 0,
      previews: { put: { kind: 'file_diff', read: 'peek', path_arg: 'path', content_arg: 'content' } },
    },
  },
};
let d: RunningDaemon | undefined;

afterAll(async () => {
  await d?.stop();
});

/** The daemons of this test, whose logs hold what their preview instances said. */
const daemons: RunningDaemon[] = [];

/**
 * How many reads the preview instances began: a preview instance runs confined with nothing writable
 * (contract 21), so the fixture says each call on stderr, which the daemon logs as upstream_stderr.
 */
const peeks = () =>
  daemons
    .flatMap((x) => x.stderr().split('\n'))
    .filter((l) => l.includes('"event":"upstream_stderr"') && l.includes('peek_start')).length;

it('[c12.decided] a preview pending at a restart is computed again after it, keeping the version', async () => {
  const dataDir = makeDataDir();
  d = await startDaemon({ dataDir, config });
  daemons.push(d);
  const ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  await waitFor(
    async () => (await ai.listTools()).tools.some((t) => t.name === 'gate__put'),
    'gate__put',
    30_000,
  );
  const r = structured(await call(ai, 'gate__put', { path: 'gate-r.txt', content: '# gate-r.txt\nalpha\n' }));
  const id = String(r.pending_id);
  await waitFor(() => peeks() >= 1, 'the read in flight');
  let owner = await OwnerSocket.open(d);
  const pending = await owner.view(id, (v) => v.preview?.status === 'pending', 'pending');
  await owner.close();
  await ai.close();
  await d.stop();

  d = await startDaemon({ dataDir, config });
  daemons.push(d);
  owner = await OwnerSocket.open(d);
  // The stored `pending` shows until the new read answers; the read is made again after the start.
  await waitFor(() => peeks() >= 2, 'the read made again', 30_000);
  writeFileSync(`${log}.release`, '');
  const ready = await owner.view(id, (v) => v.preview?.status === 'ready', 'ready after the restart');
  expect(ready.version).toBe(pending.version);
  expect(ready.preview.diff).toContain('-beta');
  expect(await owner.request({ type: 'approve', id, version: pending.version })).toMatchObject({ ok: true });
  await owner.close();
});
