/**
 * The owner's click lands on the card the owner aimed at (contracts.md 5 (v2): "a card's decision buttons
 * are inert (shown disabled) for its first second on screen and for a second after it moves, and arriving
 * cards never move the focused or hovered one"), in real Chromium against the real daemon. The AI picks
 * the moment its request arrives: right under a click aimed at another card, while the owner reads the
 * history, or just as the owner presses `a`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { callTool, mcpClient, ownerCatalog, queue, readMarks } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let page: Page;
let markFile: string;

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-click-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
  ai = await mcpClient(d);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  page = await context.newPage();
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

async function stateOf(id: string): Promise<string> {
  return String(
    (await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 })).phase ?? '',
  );
}

/** The centre of a card's Approve button once it is armed (enabled). */
async function armedApprove(id: string): Promise<{ x: number; y: number }> {
  const approve = card(page, id).locator('button.approve');
  await card(page, id).locator('button.approve:enabled').waitFor();
  const box = (await approve.boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

describe('[c5.click-safety] the owner panel never lets a click land on a card the owner did not aim at', () => {
  it('[c5.click-safety] a request arriving under a click aimed at Approve: A is approved, never B; B is disabled at first, then enabled', async () => {
    const a = await queue(ai, 'mark', { word: 'aimed' }, 'The card the owner means to approve.');
    await card(page, a).waitFor();
    const at = await armedApprove(a);
    await page.mouse.move(at.x, at.y);

    // The AI times its request to land just before the click.
    const b = await queue(ai, 'mark', { word: 'sneak' }, 'The card the owner means to approve.');
    await card(page, b).waitFor({ state: 'attached' });
    const bDisabled = await card(page, b)
      .locator('button[data-action]')
      .evaluateAll((buttons) => buttons.map((x) => (x as HTMLButtonElement).disabled));
    await page.mouse.click(at.x, at.y);
    await screenshot(page, 'click-safety-01-arrival-under-the-click');

    // The click went to A (armed, never moved): whichever card it decided, it was A, and B still waits.
    await page
      .locator(
        `article[data-pending-id="${a}"]:not([data-state="awaiting_review"]), article[data-pending-id="${b}"]:not([data-state="awaiting_review"])`,
      )
      .first()
      .waitFor();
    expect(await stateOf(b)).toBe('awaiting_review');
    expect(await card(page, b).getAttribute('data-state')).toBe('awaiting_review');
    await page.locator(`article[data-pending-id="${a}"][data-status="SUCCEEDED"]`).waitFor();
    expect(readMarks(markFile)).toEqual(['aimed']);

    // B's decision buttons (Approve, Allow…, Deny) were inert (disabled) on arrival; they arm by themselves.
    expect(bDisabled).toEqual([true, true, true]);
    await card(page, b).locator('button.approve:enabled').waitFor();
    await card(page, b).locator('button.deny:enabled').waitFor();
    expect(await card(page, b).getAttribute('data-inert')).toBeNull();
    // Leave B decided so the next tests start from a known queue.
    await card(page, b).getByRole('button', { name: /^Deny/ }).click();
    await page.locator(`article[data-pending-id="${b}"][data-status="DENIED"]`).waitFor();
  });

  it('[c5.click-safety] while the pointer is on a reconcilable history card, an arrival waits behind the "new requests" button and moves nothing', async () => {
    // Issue 23 item 5: only a card with live decision buttons holds arrivals back — here Reconcile on an
    // UNKNOWN command (stubborn outlives its deadline); a finished card without them holds nothing
    // (test/browser-held-arrival.test.ts).
    const stuck = await queue(ai, 'stubborn', {});
    await card(page, stuck).locator('button.approve:enabled').click();
    await page
      .locator(`#history article[data-pending-id="${stuck}"] button.reconcile-btn`)
      .waitFor({ timeout: 20_000 });
    const done = card(page, stuck);
    // The history sits below the search form (issue 24): bring the card into the viewport to point at it.
    await done.scrollIntoViewIfNeeded();
    const before = (await done.boundingBox())!;
    await page.mouse.move(before.x + 40, before.y + 20);

    const c = await queue(ai, 'mark', { word: 'held' });
    const arrivals = page.locator('#arrivals:not([hidden])');
    await arrivals.waitFor();
    expect(await arrivals.textContent()).toMatch(/^1 new request/);
    expect(await card(page, c).count()).toBe(0);
    expect(await done.boundingBox()).toEqual(before);
    expect(await page.title()).toMatch(/^\(1\)/);
    // The queue says the truth in words too, on its one line (nothing moves): not "Nothing waits".
    await page.locator('#queue-empty', { hasText: /held while you read/ }).waitFor();
    expect(await done.boundingBox(), 'the words changed, the card under the pointer did not move').toEqual(
      before,
    );
    await screenshot(page, 'click-safety-02-arrival-held-while-reading-history');

    // The owner moves off the card: the request takes its place at the end of the queue.
    await page.mouse.move(1, 1);
    await card(page, c).waitFor();
    expect(await arrivals.isHidden()).toBe(true);
    await card(page, c).getByRole('button', { name: /^Deny/ }).click();
    await page.locator(`article[data-pending-id="${c}"][data-status="DENIED"]`).waitFor();
  });

  it('[c5.click-safety] after `a` on a focused card focus stays on it, then on the card taking its place, never on the newest', async () => {
    await page.mouse.move(1, 1);
    const first = await queue(ai, 'mark', { word: 'first' });
    const second = await queue(ai, 'mark', { word: 'second' });
    const newest = await queue(ai, 'mark', { word: 'newest' });
    for (const id of [first, second, newest]) await card(page, id).waitFor();
    await card(page, first).focus();
    await card(page, first).locator('button.approve:enabled').waitFor();
    await page.keyboard.press('a');
    await page.locator(`article[data-pending-id="${first}"][data-status="SUCCEEDED"]`).waitFor();
    const focused = await page.evaluate(
      () => document.activeElement?.closest('article.card')?.getAttribute('data-pending-id') ?? null,
    );
    expect(focused).toBe(second);
    expect(focused).not.toBe(newest);
    expect(await stateOf(second)).toBe('awaiting_review');
    expect(await stateOf(newest)).toBe('awaiting_review');
    await screenshot(page, 'click-safety-03-focus-after-approve');
  });
});
