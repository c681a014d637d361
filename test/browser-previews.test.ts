/**
 * Contract 12 in real Chromium, with the real filesystem server behind the gate (`preset: "filesystem"`): a
 * write_file card shows the diff as lines — added and removed lines marked by a sign and a word as well as
 * colour, with line numbers — a new file says so, a long diff is folded behind a button that counts the
 * rest (reachable by keyboard), a failed preview says why in words, edit_file's dry run shows the server's
 * diff, and a multi-line argument reads as its lines. Screenshots at 1280 and 390 px go to /tmp/shots-21/.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage } from './helpers/browser.js';
import type { RunningDaemon } from './helpers/daemon.js';
import { call, type McpClient, structured } from './helpers/mcp.js';
import { notesBehindGate } from './helpers/upstreams.js';

const SHOTS = '/tmp/shots-21';
const files = mkdtempSync(join(tmpdir(), 'ogf-previews-browser-'));
let d: RunningDaemon;
let ai: McpClient;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
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

async function queued(tool: string, args: Record<string, unknown>): Promise<string> {
  const r = structured(await call(ai, tool, args));
  return String(r.pending_id);
}

/** The card of `id` once its preview is `status`. */
async function previewed(id: string, status: string) {
  const c = card(page, id);
  await c.locator(`section.preview[data-preview-status="${status}"]`).waitFor({ state: 'attached' });
  return c;
}

/** Screenshots of one card at desktop and phone width. */
async function shoot(id: string, name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    // The card on the whole page (an element shot scrolls it under the panel's sticky header).
    const box = (await card(page, id).boundingBox())!;
    const scrollY = await page.evaluate(() => window.scrollY);
    await page.screenshot({
      path: join(SHOTS, `${name}-${width}.png`),
      fullPage: true,
      clip: { x: box.x, y: box.y + scrollY, width: box.width, height: box.height },
    });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function deny(id: string): Promise<void> {
  const button = card(page, id).getByRole('button', { name: /^Deny/ });
  await card(page, id).locator('button.deny:enabled').waitFor();
  await button.click();
  await page.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
  // Off the cards: while the owner points at or focuses a card an arrival would move, arrivals wait
  // (contract 5 (v2)), and the next test's card must come in.
  await page.mouse.move(0, 0);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
}

describe('the preview on the card (contract 12)', () => {
  it('[c12.card] [c12.text-removed] a write shows its diff lines with signs, words and line numbers; the content reads as its lines', async () => {
    const path = join(files, 'shopping.md');
    writeFileSync(path, '# Shopping\n- milk\n- eggs\n- tea\n- jam\n');
    const id = await queued('notes__write_file', {
      path,
      content: '# Shopping\n- milk\n- eggs\n- rm -rf bread\n- jam\n',
    });
    const c = await previewed(id, 'ready');
    const text = await c.textContent();
    expect(text).toContain('What this call would change');
    expect(text).toContain('1 line added, 1 removed');
    expect(text).toContain('The file may still change before the command runs');
    const added = c.locator('tr.diff-add');
    expect(await added.count()).toBe(1);
    expect(await added.locator('.sign').textContent()).toContain('+');
    expect(await added.locator('.sign .visually-hidden').textContent()).toBe('added');
    expect(await added.locator('.ln-new').textContent()).toBe('4');
    expect(await added.locator('.code').textContent()).toBe('- rm -rf bread');
    const removed = c.locator('tr.diff-del');
    expect(await removed.locator('.sign').textContent()).toContain('−');
    expect(await removed.locator('.sign .visually-hidden').textContent()).toBe('removed');
    expect(await removed.locator('.ln-old').textContent()).toBe('4');
    expect(await removed.locator('.code').textContent()).toBe('- tea');
    const context = c.locator('tr.diff-ctx').first();
    expect(await context.locator('.sign .visually-hidden').textContent()).toBe('unchanged');
    // The table speaks to screen readers: a caption and column headers.
    expect(await c.locator('table.diff caption').textContent()).toBe(`Changes to ${path}`);
    expect(await c.getByRole('region', { name: `Changes to ${path}` }).count()).toBe(1);
    // Text read as text: the content argument as its lines, counted on the value itself.
    const arg = c.locator('dd[data-arg="content"]');
    expect(await arg.locator('pre.arg-text').textContent()).toBe(
      '# Shopping\n- milk\n- eggs\n- rm -rf bread\n- jam\n',
    );
    expect(await arg.textContent()).toContain('5 lines, 46 characters');
    await shoot(id, 'preview-diff');
    await deny(id);
    // Contract 12 (v4): once it ended, its preview's text left the store, and the card says so.
    const ended = page.locator(`article[data-pending-id="${id}"][data-status="DENIED"] .preview-removed`);
    expect(await ended.textContent()).toContain('removed after the command ended');
    expect(await page.locator(`article[data-pending-id="${id}"] table.diff`).count()).toBe(0);
  });

  it('[c12.card] a new file says so; a failed preview says why; a dry run shows the server diff', async () => {
    const fresh = await queued('notes__write_file', { path: join(files, 'fresh.md'), content: 'one\ntwo\n' });
    const c1 = await previewed(fresh, 'ready');
    expect(await c1.locator('.preview-new-file').textContent()).toContain('New file');
    expect(await c1.locator('tr.diff-add').count()).toBe(2);
    await shoot(fresh, 'preview-new-file');

    const outside = join(mkdtempSync(join(tmpdir(), 'ogf-outside-')), 'x.md');
    const refused = await queued('notes__write_file', { path: outside, content: 'x\n' });
    const c2 = await previewed(refused, 'failed');
    expect(await c2.locator('.preview-error').textContent()).toMatch(
      /^No preview: the upstream notes refused to read the file: Access denied/,
    );
    await shoot(refused, 'preview-failed');

    const todo = join(files, 'todo.md');
    writeFileSync(todo, '- eggs\n- milk\n');
    const edit = await queued('notes__edit_file', {
      path: todo,
      edits: [{ oldText: '- eggs', newText: '- eggs\n- bread' }],
    });
    const c3 = await previewed(edit, 'ready');
    expect(await c3.textContent()).toContain('What the server says this call would do (dry run)');
    expect(await c3.locator('tr.diff-add .code').textContent()).toBe('- bread');
    await shoot(edit, 'preview-dry-run');
    for (const id of [fresh, refused, edit]) await deny(id);
  });

  it('[c12.fold] a long diff is folded with a count, and the keyboard opens it', async () => {
    const path = join(files, 'long.md');
    const before = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`);
    writeFileSync(path, `${before.join('\n')}\n`);
    const after = before.map((l, i) => (i % 2 === 0 ? `${l} changed` : l));
    const id = await queued('notes__write_file', { path, content: `${after.join('\n')}\n` });
    const c = await previewed(id, 'ready');
    const rows = c.locator('table.diff tbody tr');
    expect(await rows.count()).toBe(60);
    const more = c.locator('button.diff-more');
    const total = 1 + 450; // one hunk header; 150 removed, 150 added, 150 unchanged
    expect(await more.textContent()).toBe(`Show ${total - 60} more lines`);
    await shoot(id, 'preview-folded');
    await more.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count()).toBe(total);
    expect(await more.count()).toBe(0);
    await deny(id);
  });
});
