/**
 * The history search, its export and "who did what, when" in the owner panel (contract 14), in real
 * Chromium against the real daemon: the search is answered by the daemon (text in arguments, in a deny
 * note, in the decider; a state; a client and a date range), the history then shows the results only,
 * "Export shown (JSONL)" downloads the shown commands' audit entries, which `ogf-broker audit verify --file`
 * accepts, and a card lists its entries on request. Screenshots at 1280 and 390 px wide go to
 * /tmp/shots-24/ (and test-output/).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { callTool, mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

const SHOTS = '/tmp/shots-24';
let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let owner: OwnerSocket;
const ids: Record<string, string> = {};

async function shot(page: Page, name: string): Promise<void> {
  const path = await screenshot(page, name);
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(path, join(SHOTS, `${name}.png`));
}

/** The ids of the history cards the page shows now. */
function shown(page: Page): Promise<string[]> {
  return page
    .locator('#history article.card:not([hidden])')
    .evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.pendingId ?? ''));
}

async function searchFor(page: Page, fill: Record<string, string>, expected: string[]): Promise<void> {
  await page.getByRole('button', { name: 'Clear search' }).click();
  for (const [id, value] of Object.entries(fill)) {
    if (id === 'search-state') await page.locator(`#${id}`).selectOption(value);
    else await page.locator(`#${id}`).fill(value);
  }
  await page.getByRole('button', { name: 'Search history' }).click();
  await expect
    .poll(() => shown(page).then((s) => s.sort()), { timeout: 10_000 })
    .toEqual([...expected].sort());
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-audit-');
  d = await startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks.txt')) });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  for (const word of ['alpha', 'beta', 'gamma', 'delta']) {
    ids[word] = await queue(ai, 'mark', { word }, `write ${word}`);
    await owner.view(ids[word]!, (v) => v.version === 1, `${word} waiting`);
  }
  await owner.request({ type: 'approve', id: ids.alpha, version: 1 });
  await owner.request({ type: 'deny', id: ids.beta, version: 1, note: 'too noisy today' });
  await owner.request({ type: 'approve', id: ids.gamma, version: 1 });
  await callTool(ai, 'cancel_command', { pending_id: ids.delta });
  for (const id of [ids.alpha!, ids.gamma!]) await owner.view(id, (v) => v.status === 'SUCCEEDED', 'ran');
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

/** The heights of the history search's fields as laid out (text, state, client, from, to). */
function fieldHeights(page: Page): Promise<number[]> {
  return page.$$eval('#history-search input, #history-search select', (els) =>
    els
      .filter((e) => (e as HTMLElement).offsetParent !== null)
      .map((e) => Math.round(e.getBoundingClientRect().height * 10) / 10),
  );
}

describe('[c14.panel] history search, export and who did what', () => {
  it('searches through the daemon, exports what is shown, and lists a card’s entries (1280 px)', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    await loginPage(page, d);
    await expect.poll(() => shown(page).then((s) => s.length)).toBe(4);
    // One row of fields of one height: the text, date and list fields were each sized their own way.
    const heights = await fieldHeights(page);
    expect(heights).toHaveLength(5);
    expect(new Set(heights).size, heights.join(' ')).toBe(1);

    await searchFor(page, { 'search-text': 'noisy' }, [ids.beta!]); // the deny note
    await expect(page.locator('#search-status').textContent()).resolves.toBe('1 matching command.');
    await searchFor(page, { 'search-text': 'GAMM' }, [ids.gamma!]); // the arguments, any case
    await searchFor(page, { 'search-state': 'denied' }, [ids.beta!, ids.delta!]);
    await searchFor(page, { 'search-text': 'owner', 'search-state': 'succeeded' }, [ids.alpha!, ids.gamma!]); // the decider
    const today = new Date().toLocaleDateString('en-CA');
    await searchFor(
      page,
      { 'search-client': 'local', 'search-since': today, 'search-until': today },
      Object.values(ids),
    );
    await searchFor(page, { 'search-client': 'nobody' }, []);
    await searchFor(page, { 'search-state': 'denied' }, [ids.beta!, ids.delta!]);

    // Export what is shown: the two denied commands' entries, which verify on their own.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export shown (JSONL)' }).click(),
    ]);
    const file = join(d.dataDir, 'panel-export.jsonl');
    await download.saveAs(file);
    const lines = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(new Set(lines.filter((l) => l.type === undefined).map((l) => l.command_id))).toEqual(
      new Set([ids.beta, ids.delta]),
    );
    const v = await runCli(['audit', 'verify', '--file', file]);
    expect(v.stdout.trim()).toBe('ok: 4 entries, 0 checkpoints, 0 passkey approvals verified');
    expect(v.code).toBe(0);

    // Who did what, when: on request, from the daemon's record.
    await page.getByRole('button', { name: 'Clear search' }).click();
    const alpha = card(page, ids.alpha!);
    await alpha.getByText('Who did what, when').click();
    const items = alpha.locator('.trail-list li[data-seq]');
    await expect.poll(() => items.count()).toBe(4);
    expect(await items.allTextContents()).toEqual([
      expect.stringMatching(/client:local asked/),
      expect.stringMatching(/owner approved — approved/),
      expect.stringMatching(/daemon started it — running/),
      expect.stringMatching(/daemon recorded the outcome — succeeded/),
    ]);
    const beta = card(page, ids.beta!);
    await beta.getByText('Who did what, when').click();
    await expect
      .poll(() => beta.locator('.trail-list li[data-seq]').allTextContents())
      .toEqual([
        expect.stringMatching(/client:local asked/),
        expect.stringMatching(/owner denied — denied · OwnerDenied · “too noisy today”/),
      ]);
    await searchFor(page, { 'search-text': 'noisy' }, [ids.beta!]);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, 'audit-panel-1280');
    await context.close();
  }, 90_000);

  it('fits a 390 px phone screen', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await loginPage(page, d);
    await expect.poll(() => shown(page).then((s) => s.length)).toBe(4);
    await searchFor(page, { 'search-text': 'too noisy' }, [ids.beta!]);
    await card(page, ids.beta!).getByText('Who did what, when').click();
    await expect.poll(() => card(page, ids.beta!).locator('.trail-list li[data-seq]').count()).toBe(2);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // Contract 13.2: a thumb's size (44 px) for every field of the search, as for its buttons.
    for (const h of await fieldHeights(page)) expect(h).toBeGreaterThanOrEqual(44);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, 'audit-panel-390');
    await context.close();
  }, 60_000);
});
