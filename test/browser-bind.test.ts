/**
 * Contract 20 in real Chromium, with the real filesystem server behind the gate: a card whose file changed
 * after the owner approved comes back saying so, with the new diff, and approving it again writes; a
 * succeeded write's card offers `Revert …`, which has the daemon read the file and then shows the diff back
 * and a confirm button (or why not, when the file changed since), and the revert runs as the owner's own command and restores the file. Screenshots at 1280 and 390 px in /tmp/bind-*.png.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage } from './helpers/browser.js';
import { type RunningDaemon, waitFor } from './helpers/daemon.js';
import { call, type McpClient, structured } from './helpers/mcp.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-bind-browser-'));
let d: RunningDaemon;
let ai: McpClient;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(files, { preset: 'filesystem', wait_seconds: 0 }));
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await d?.stop();
});

/** Screenshots of one card at desktop and phone width. */
async function shoot(id: string, name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const box = (await card(page, id).boundingBox())!;
    const scrollY = await page.evaluate(() => window.scrollY);
    await page.screenshot({
      path: `/tmp/bind-${name}-${width}.png`,
      fullPage: true,
      clip: { x: box.x, y: box.y + scrollY, width: box.width, height: box.height },
    });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function approve(id: string): Promise<void> {
  const c = card(page, id);
  await c.locator('button.approve:enabled').waitFor();
  await c.locator('button.approve').click();
}

describe('the card of contract 20', () => {
  it('[c20.card] a card back from a changed file says so and shows the new diff; a written file offers Revert …', async () => {
    const path = join(files, 'garden.md');
    writeFileSync(path, '# Garden\n- tomatoes\n- basil\n');
    const id = String(
      structured(
        await call(ai, 'notes__write_file', { path, content: '# Garden\n- tomatoes\n- basil\n- mint\n' }),
      ).pending_id,
    );
    const c = card(page, id);
    await c.locator('section.preview[data-preview-status="ready"]').waitFor({ state: 'attached' });
    writeFileSync(path, '# Garden\n- tomatoes\n- basil\n- chives (added by hand)\n');
    await approve(id);
    await c.locator('p.rebound').waitFor();
    expect(await c.locator('p.rebound').textContent()).toContain('The file changed since you approved');
    expect(await c.getAttribute('data-state')).toBe('awaiting_review');
    expect(await c.locator('tr.diff-del .code').allTextContents()).toContain('- chives (added by hand)');
    expect(readFileSync(path, 'utf8')).toContain('chives');
    await page.mouse.move(0, 0);
    await shoot(id, 'rebound');

    await approve(id);
    const done = page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`);
    await done.waitFor();
    expect(readFileSync(path, 'utf8')).toBe('# Garden\n- tomatoes\n- basil\n- mint\n');
    // Revert …: opening it has the daemon read the file; the diff back and the confirm come with that read.
    await done.locator('summary.revert-open').click();
    const back = done.locator('details.revert');
    await back.locator('section.preview[data-preview-status="ready"]').waitFor();
    expect(await back.locator('tr.diff-add .code').allTextContents()).toContain('- chives (added by hand)');
    expect(await back.locator('tr.diff-del .code').allTextContents()).toContain('- mint');
    await page.mouse.move(0, 0);
    await shoot(id, 'revert');
    await back.locator('button.revert-btn:enabled').waitFor();
    await back.locator('button.revert-btn').click();
    await done.locator('.card-msg', { hasText: 'Revert queued as' }).waitFor();
    await waitFor(
      () => readFileSync(path, 'utf8') === '# Garden\n- tomatoes\n- basil\n- chives (added by hand)\n',
      'the file written back',
    );
    const revert = page.locator('article[data-client="owner:owner"][data-status="SUCCEEDED"]');
    await revert.waitFor();
    expect(await revert.locator('p.revert-of').textContent()).toContain(id);
  });

  it('[c20.card] a file changed after the write: opening Revert … reads it and says why not, offering no confirm', async () => {
    const path = join(files, 'shed.md');
    // The owner leaves the last card (focus on its Revert button holds new arrivals back: click safety).
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.mouse.move(0, 0);
    writeFileSync(path, 'rake\n');
    const id = String(
      structured(await call(ai, 'notes__write_file', { path, content: 'rake\nhoe\n' })).pending_id,
    );
    await card(page, id)
      .locator('section.preview[data-preview-status="ready"]')
      .waitFor({ state: 'attached' });
    await approve(id);
    const done = page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`);
    await done.waitFor();
    writeFileSync(path, 'rake\nhoe\nspade (by hand)\n');
    await done.locator('summary.revert-open').click();
    const refused = done.locator('details.revert p.revert-refused');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('NotRevertible: the file changed after this command');
    expect(await done.locator('button.revert-btn').count()).toBe(0);
    await page.mouse.move(0, 0);
    await shoot(id, 'revert-refused');
    // Closing and opening again reads the file again: put back what the command wrote, and the offer returns.
    writeFileSync(path, 'rake\nhoe\n');
    await done.locator('summary.revert-open').click();
    await done.locator('summary.revert-open').click();
    await done.locator('details.revert button.revert-btn:enabled').waitFor();
    expect(await done.locator('details.revert tr.diff-del .code').allTextContents()).toContain('hoe');
    expect(await done.locator('details.revert p.revert-refused').count()).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('rake\nhoe\n');
  });
});
