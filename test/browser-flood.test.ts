/**
 * The owner panel in real Chromium after a flood (contracts.md 1.3, 5, v2): one client fills its
 * max_pending_per_client with worst-case Views, so the snapshot (~10 MiB) reaches the browser as one
 * message in several WebSocket fragments (owner/hub.ts), and the panel shows every card.
 */
import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, loginPage } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { queuedId, RawMcp, refusalText } from './helpers/raw-mcp.js';

let d: RunningDaemon;
let browser: Browser;

beforeAll(async () => {
  d = await startDaemon({
    dataDir: makeDataDir('ogf-browser-flood-'),
    config: {
      review_timeout_s: 3600,
      commands: {
        note: {
          description: 'Print a note',
          argv: ['/bin/echo', '{text}'],
          params: { text: { type: 'string', max_length: 4096 } },
        },
      },
    },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('owner panel after a flood', () => {
  it('[c5.daemon-survives] a fragmented snapshot of 100 worst-case Views shows every card', async () => {
    const ai = await RawMcp.open(d, d.mcpToken);
    const text = '\ud800'.repeat(4096); // 6 bytes of JSON per character
    const call = { command: 'note', args: { text }, wait_seconds: 0 };
    const responses = (
      await Promise.all(Array.from({ length: 5 }, () => ai.batch(Array.from({ length: 25 }, () => call))))
    ).flat();
    const ids = responses.map(queuedId).filter((id): id is string => id !== undefined);
    expect(ids).toHaveLength(100); // the default max_pending_per_client
    for (const r of responses.filter((x) => queuedId(x) === undefined)) {
      expect(refusalText(r)).toMatch(/^TooManyPending: max_pending_per_client is 100 /);
    }
    const page = await browser.newPage();
    await loginPage(page, d);
    await page.waitForFunction(
      (n) => document.querySelectorAll('article[data-pending-id]').length === n,
      100,
    );
    const shown = await page.$$eval('article[data-pending-id]', (cards) =>
      cards.map((c) => c.getAttribute('data-pending-id')),
    );
    expect(shown.sort()).toEqual(ids.sort());
    await page.close();
  });
});
