/**
 * Attack (issue 19, findings 1 and 2): the AI alone, with the official filesystem server behind the gate
 * exactly as docs/upstreams.md configures it, aims its arguments at the owner's eyes.
 *
 * 1. The server's schemas accept extra properties. Before the fix a value nested 2,600 deep (5 KB on the
 *    wire) became ~13.5 M characters once the panel pretty-printed it, all of it kept in the DOM even when
 *    folded: 150 such values in one 780 KB call crashed the Chromium tab, and since the card stays among the
 *    snapshot's newest finals, every reload crashed again. Now the daemon refuses arguments nested deeper
 *    than 32 (InvalidArguments naming the field and the limit), and the panel renders even the largest
 *    argument it still accepts in bounded work: folded by size and depth, opened one level at a time.
 * 2. `notes__write_file {path: "…/photo-\u202Egnp.sh"}` showed as `photo-hs.png` on the card while approving
 *    wrote `photo-‮gnp.sh`. Now every control and bidi character is shown as a visible escape (`\u202e`) in
 *    the panel and in `ogf-broker list`, and a string with newlines reads as its lines (contract 12).
 *
 * Real daemon, real SDK client over HTTP, real server-filesystem from node_modules, real Chromium.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, OUTPUT_DIR } from './helpers/browser.js';
import { CLI, type RunningDaemon } from './helpers/daemon.js';
import { call, commandCount, type McpClient, structured, textOf } from './helpers/mcp.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-attack-args-'));
/** Every character the panel and `list` must never show raw: C0, DEL, C1, bidi controls, line separators. */
const RAW_RE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

let d: RunningDaemon;
let ai: McpClient;
let browser: Browser;
let page: Page;

/** `inner` wrapped in `depth` arrays. */
function nest(depth: number, inner: unknown): unknown {
  let v = inner;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/**
 * Saves what `target` shows at desktop (1280) and phone (390) width as test-output/<name>-desktop.png and
 * -phone.png: a page region from `above` px over the target's top, at most 1,400 px tall (a whole card of
 * 100 arguments at phone width would shrink to nothing when viewed).
 */
async function shoot(target: Locator, name: string, above = 0): Promise<void> {
  for (const [suffix, width] of [
    ['desktop', 1280],
    ['phone', 390],
  ] as const) {
    await page.setViewportSize({ width, height: 900 });
    await target.scrollIntoViewIfNeeded();
    const box = await target.boundingBox();
    const scrollY = await page.evaluate(() => window.scrollY);
    if (box === null) throw new Error(`${name}: nothing to shoot`);
    const y = Math.max(0, box.y + scrollY - above);
    // The sticky header is drawn where the page is scrolled to: at the top it stays out of the region.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({
      path: join(OUTPUT_DIR, `${name}-${suffix}.png`),
      fullPage: true,
      clip: { x: 0, y, width, height: Math.min(box.height + above, 1400) },
    });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** The card of a queued call, once its decision buttons are armed (contract 5 (v2): inert at first). */
async function pendingCard(id: string): Promise<Locator> {
  const c = card(page, id);
  await c.locator('button.approve:enabled').waitFor({ timeout: 30_000 });
  return c;
}

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(files, { wait_seconds: 0 }));
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await d?.stop();
});

describe('[c7.args-bounded] no argument can crash or stall the panel', () => {
  it('[c7.args-bounded] 150 values nested 2,600 deep are refused, naming the field and the limit; nothing is queued', async () => {
    const before = commandCount(d);
    const args: Record<string, unknown> = { path: join(files, 'deep.txt'), content: 'x' };
    for (let i = 0; i < 150; i++) args[`v${i}`] = nest(2600, 0);
    const r = await call(ai, 'notes__write_file', args);
    expect(r.isError, textOf(r)).toBe(true);
    expect(textOf(r)).toBe(
      `InvalidArguments: v0 must nest at most 32 levels of arrays and objects, got deeper at v0${'.0'.repeat(32)}`,
    );
    expect(commandCount(d)).toBe(before);
    // One level less is accepted: the limit is exactly what the message says.
    const ok = await call(ai, 'notes__write_file', { path: args.path, content: 'x', v0: nest(32, 0) });
    expect(ok.isError, textOf(ok)).toBeFalsy();
    await call(ai, 'cancel_command', { pending_id: structured(ok).pending_id });
  });

  it('[c7.args-bounded] the largest arguments the daemon accepts render folded in bounded DOM, open level by level, and Approve works', async () => {
    const path = join(files, 'largest.txt');
    const args: Record<string, unknown> = {
      path,
      content: 'the content',
      // 32 levels deep with 250,000 numbers at the bottom: ~500 KB of JSON, ~16 M characters pretty-printed.
      deep: nest(31, new Array(250_000).fill(0)),
      // A long text of many lines (contract 12: shown as its lines, its length in characters).
      lines: 'a line of the text\n'.repeat(5_000),
    };
    for (let i = 0; i < 100; i++) args[`w${i}`] = nest(32, i);
    const r = await call(ai, 'notes__write_file', args);
    expect(r.isError, textOf(r)).toBeFalsy();
    const id = String(structured(r).pending_id);
    const c = await pendingCard(id);
    // Over 16 KiB of JSON, owner frames carry a preview (c5.owner-frames-bounded): load them all first, then
    // the whole arguments go through the bounded renderer this test is about.
    await c.getByRole('button', { name: 'Load all arguments' }).click();
    await c.locator('.args-loaded').waitFor({ timeout: 30_000 });

    // Bounded: the whole page is a few hundred KB of markup, not the ~16 M characters of pretty JSON.
    const sizes = async () =>
      page.evaluate(
        (cardId) => ({
          html: document.body.innerHTML.length,
          card: document.querySelector(`article[data-pending-id="${cardId}"]`)?.textContent?.length ?? -1,
        }),
        id,
      );
    const folded = await sizes();
    expect(folded.card).toBeGreaterThan(0);
    expect(folded.card).toBeLessThan(40_000);
    expect(folded.html).toBeLessThan(300_000);
    const deep = c.locator('dd[data-arg="deep"] > details.arg-fold');
    expect(await deep.locator('> summary').textContent()).toMatch(/nests 32 deep/);
    await shoot(c, 'attack-args-deep-folded');

    // Opening goes one level at a time; the bottom level shows its first items and how many more there are.
    let level = deep;
    for (let i = 0; i < 32; i++) {
      await level.locator('> summary').click();
      if (i < 31) level = level.locator('> .arg-items details.arg-fold').first();
    }
    const bottom = level.locator('> .arg-items');
    expect(await bottom.locator('> .arg-item').count()).toBe(50);
    expect(await bottom.locator('> button.arg-more').textContent()).toMatch(/249,950 more/);
    await bottom.locator('> button.arg-more').click();
    expect(await bottom.locator('> .arg-item').count()).toBe(100);
    const opened = await sizes();
    expect(opened.html).toBeLessThan(400_000);
    await shoot(bottom, 'attack-args-deep-opened', 500);

    // The multi-line text reads as its lines, with its length in characters of the value itself.
    const lines = c.locator('dd[data-arg="lines"]');
    expect(await lines.textContent()).toContain('95,000 characters');

    // The page is responsive: Approve works, and the server wrote exactly what was approved.
    await c.getByRole('button', { name: /^Approve/ }).click();
    await page
      .locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`)
      .waitFor({ timeout: 30_000 });
    expect(readFileSync(path, 'utf8')).toBe('the content');

    // A reload (the card is now among the snapshot's newest finals) renders it again, still bounded.
    await page.reload();
    await page.locator('#connection[data-state="live"]').waitFor();
    await card(page, id).waitFor();
    expect((await sizes()).html).toBeLessThan(300_000);
  });
});

describe('[c5.upstream-args-visible] control and bidi characters in upstream arguments are shown escaped', () => {
  it('[c5.upstream-args-visible] [c5.terminal-escaped] a bidi path shows as \\u202e on the card and in list; approving writes exactly it', async () => {
    const path = join(files, 'photo-\u202Egnp.sh');
    const r = await call(ai, 'notes__write_file', {
      path,
      content: 'echo owned',
      '\u202Ekey': 'v\u2066x',
      note: 'a\nb\u001b[2Jc',
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const id = String(structured(r).pending_id);
    const c = await pendingCard(id);
    const text = String(await c.textContent());
    expect(text).toContain('photo-\\u202egnp.sh');
    expect(text).toContain('\\u202ekey');
    expect(text).toContain('v\\u2066x');
    expect(text).not.toMatch(RAW_RE);
    expect(await page.evaluate(() => document.body.textContent)).not.toMatch(RAW_RE);
    // Contract 12: the string with a newline reads as its lines; the escape sequence is visible; 8 characters.
    const note = c.locator('dd[data-arg="note"]');
    expect(await note.locator('pre').textContent()).toBe('a\nb\\u001b[2Jc');
    expect(await note.textContent()).toContain('8 characters');
    await shoot(c, 'attack-args-bidi');

    const list = spawnSync(process.execPath, [CLI, 'list', '--data-dir', d.dataDir], { encoding: 'utf8' });
    expect(list.stdout).toContain('photo-\\u202egnp.sh');
    expect(list.stdout).toContain('arg \\u202ekey: "v\\u2066x"');
    expect(list.stdout).not.toMatch(RAW_RE);

    // What the owner approves is what runs: the file gets exactly the name the AI sent.
    await c.getByRole('button', { name: /^Approve/ }).click();
    await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    expect(existsSync(path)).toBe(true);
  });
});
