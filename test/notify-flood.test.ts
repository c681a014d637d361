/**
 * A flood of 500 requests produces digests, not 500 messages (contract 13.1, issue 23 "Done means"): the
 * first 5 of each 10 s window go one by one, the rest as one digest at the window's end, and together they
 * account for every request. The receiver is a loopback HTTP server speaking the `json` format.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, ownerCatalog, queue } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';

let d: RunningDaemon;
let ai: Client;
let hook: HttpReceiver;

beforeAll(async () => {
  hook = await HttpReceiver.start();
  const dataDir = makeDataDir();
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(join(dataDir, 'marks'), {
      max_pending_per_client: 1000,
      notify: [{ id: 'hook', type: 'webhook', url: hook.url(), format: 'json' }],
    }),
  });
  ai = await mcpClient(d);
});

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  await hook?.close();
});

it('[c13.1.digest] 500 requests make a few messages and digests that cover them all', async () => {
  const started = Date.now();
  for (let i = 0; i < 500; i += 25)
    await Promise.all(Array.from({ length: 25 }, (_, k) => queue(ai, 'mark', { word: `w${i + k}` })));
  const windows = Math.ceil((Date.now() - started) / 10_000) + 1;
  const covered = () =>
    hook
      .json()
      .reduce((n, m) => n + (m.event === 'waiting' ? 1 : m.event === 'digest' ? Number(m.count) : 0), 0);
  await waitFor(() => covered() === 500, 'messages covering all 500 requests', 40_000);
  const messages = hook.json();
  const digests = messages.filter((m) => m.event === 'digest');
  expect(digests.length).toBeGreaterThan(0);
  // At most 5 one by one and one digest per 10 s window.
  expect(messages.length).toBeLessThanOrEqual(6 * windows);
  for (const m of digests) {
    expect(m.summary).toBe(`${m.count} more requests from local`);
    expect(m.clients).toEqual({ local: m.count });
    expect(m.url).toBe(`${d.url}/`);
  }
  expect(JSON.stringify(messages)).not.toMatch(/"w\d+"/);
}, 120_000);
