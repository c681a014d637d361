/**
 * Contract 11 in the owner panel, in real Chromium against the real daemon with the real filesystem server
 * behind the gate: Allow… on a write offers "paths under DIR" for the path's folder and each parent, shows
 * the grant's expression and what it would have allowed of the past requests (policy_test) before the owner
 * confirms, updated as the choice changes; once confirmed, a later write under that folder runs without a
 * click and one outside waits. Screenshots at 1280 and 390 px go to /tmp/shots-22/.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage } from './helpers/browser.js';
import type { RunningDaemon } from './helpers/daemon.js';
import { call, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { notesBehindGate } from './helpers/upstreams.js';

const SHOTS = '/tmp/shots-22';
const files = realpathSync(mkdtempSync(join(tmpdir(), 'ogf-browser-rules-')));
mkdirSync(join(files, 'drafts'));

let d: RunningDaemon;
let ai: McpClient;
let watcher: OwnerSocket;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ({ d, ai } = await notesBehindGate(files, { wait_seconds: 0 }));
  watcher = await OwnerSocket.open(d);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await watcher?.close();
  await d?.stop();
  rmSync(files, { recursive: true, force: true });
});

async function write(path: string, content = 'x'): Promise<Frame> {
  return structured(await call(ai, 'notes__write_file', { path, content })) as Frame;
}

async function decide(id: string, type: 'approve' | 'deny'): Promise<void> {
  const v = await watcher.view(id, () => true, id);
  expect((await watcher.request({ type, id, version: v.version })).ok).toBe(true);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

describe('[c11.panel-allow] Allow… → paths under DIR, in Chromium', () => {
  it('shows the expression and the would-have-allowed line, then lets later writes under the folder through', {
    timeout: 120_000,
  }, async () => {
    // A known past: one write under drafts/ the owner approved, one they denied.
    const old1 = (await write(`${files}/drafts/old1.md`)).pending_id as string;
    await decide(old1, 'approve');
    const old2 = (await write(`${files}/drafts/old2.md`)).pending_id as string;
    await decide(old2, 'deny');
    await watcher.view(old1, (v) => v.state === 'succeeded', 'old1 written');

    for (const width of [390, 1280]) {
      const context = await browser.newContext({ viewport: { width, height: width === 390 ? 844 : 900 } });
      const page = await context.newPage();
      await loginPage(page, d);
      const asked = await write(`${files}/drafts/new-${width}.md`, 'hello');
      const id = asked.pending_id as string;
      const c = card(page, id);
      await c.waitFor();
      await page.mouse.move(1, 1);
      await c.locator('button.allow:enabled').waitFor();
      await c.getByRole('button', { name: /^Allow/ }).click();
      const dialog = page.getByRole('dialog', { name: /allow/i });
      await dialog.waitFor();
      // The exact arguments first: the expression names them, and the test runs for them too.
      const expression = dialog.locator('#allow-expression');
      const tested = dialog.locator('#allow-test');
      await tested.filter({ hasText: /Would have allowed/ }).waitFor();
      expect(await expression.textContent()).toContain(`"path":"${files}/drafts/new-${width}.md"`);
      expect(await tested.textContent()).toMatch(/^Would have allowed 1 of your last \d+ requests\.$/);
      // One choice per folder, up to `/`.
      const under = dialog.getByLabel(/^path: paths under/);
      const folders = files.split('/').filter(Boolean).length + 2; // drafts, each parent of files, and '/'
      expect(await under.count()).toBe(folders);
      await dialog.getByLabel(`path: paths under ${files}/drafts`, { exact: true }).check();
      await expression.filter({ hasText: 'path_under' }).waitFor();
      expect(await expression.textContent()).toBe(`path_under(args.path, "${files}/drafts")`);
      // old1 (approved), old2 (denied), the 390 px request once, and this one: all under drafts/.
      const n = width === 390 ? 3 : 4;
      await tested
        .filter({ hasText: `Would have allowed ${n} of your last ${n} requests — 1 of them you denied.` })
        .waitFor();
      await shot(page, `allow-paths-under-${width}`);
      if (width === 390) {
        // Cancelled at 390 px; the owner approves it from the socket (the panel at 1280 px makes the grant).
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await decide(id, 'approve');
        await context.close();
        continue;
      }
      await dialog.getByRole('button', { name: 'Approve and allow' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page.mouse.move(1, 1);
      await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
      const grants = (await watcher.request({ type: 'grants' })).grants as Frame[];
      const g = grants.find((x) => x.when !== undefined)!;
      expect(g).toMatchObject({
        command: 'notes__write_file',
        client: 'local',
        when: `path_under(args.path, "${files}/drafts")`,
      });
      expect(g.args).toBeUndefined();
      // Later: a write under drafts/ runs without a click; one outside waits.
      const later = await write(`${files}/drafts/deeper/../later.md`, 'later');
      const done = structured(
        await call(ai, 'await_command_result', { pending_id: later.pending_id, wait_seconds: 30 }),
      );
      expect(done.status).toBe('SUCCEEDED');
      expect(readFileSync(join(files, 'drafts', 'later.md'), 'utf8')).toBe('later');
      const outside = await write(`${files}/drafts/../outside.md`, 'no');
      expect(outside).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
      // An arrival waits while the pointer rests on a card (contract 5 (v2)); off the cards, it shows.
      await page.mouse.move(1, 1);
      await card(page, outside.pending_id as string).waitFor();
      expect(await card(page, outside.pending_id as string).getAttribute('data-state')).toBe(
        'awaiting_review',
      );
      const row = page.locator('#grants-list [data-grant-id]').first();
      expect(await row.textContent()).toContain(`requests where path_under(args.path, "${files}/drafts")`);
      await card(page, later.pending_id as string)
        .filter({ hasText: /allowed by grant/ })
        .waitFor();
      await shot(page, 'after-grant-1280');
      await context.close();
    }
  });
});
