/**
 * Contract 7 and 5 (v2), in real Chromium: an upstream call's card shows the upstream, the tool, the
 * server's claims and every argument (a long one folded, opening to the whole value); Approve runs it and
 * the upstream's answer reaches the AI. `ogf-broker list` shows the same, escaped. Real daemon, real
 * server-filesystem from node_modules, real SDK client over HTTP.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { CLI, type RunningDaemon } from './helpers/daemon.js';
import { call, type McpClient, structured, textOf } from './helpers/mcp.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-up-browser-'));
let d: RunningDaemon;
let mcp: McpClient;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ({ d, ai: mcp } = await notesBehindGate(files));
  browser = await launchBrowser();
  page = await browser.newPage();
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  await d?.stop();
});

it('[c7.card] [c8.panel] the card shows upstream, tool, claims and every argument; Approve runs it and the answer reaches the AI', async () => {
  const path = join(files, 'from-the-panel.txt');
  const long = `${'a long line of text that the owner must be able to read whole; '.repeat(8)}END\u001b[2J`;
  const answer = call(mcp, 'notes__write_file', { path, content: long });
  const c = page.locator('article[data-status="PENDING"]').first();
  await c.waitFor();
  const id = String(await c.getAttribute('data-pending-id'));
  const text = await c.innerText();
  expect(text).toContain('Upstream notes · tool write_file');
  expect(text).toContain('server says: destructive');
  expect(text).toContain(JSON.stringify(path));
  // The long value starts folded and opens to every character.
  const fold = c.locator('details.arg-fold');
  expect(await fold.count()).toBe(1);
  await fold.locator('summary').click();
  expect(await fold.locator('pre').textContent()).toBe(JSON.stringify(long, null, 2));
  await screenshot(page, 'upstream-01-card');

  // The terminal shows the same, escaped: no raw control character reaches it.
  const list = spawnSync(process.execPath, [CLI, 'list', '--data-dir', d.dataDir], { encoding: 'utf8' });
  expect(list.stdout).toContain('upstream: notes  tool: write_file');
  expect(list.stdout).toContain('server says: destructive');
  expect(list.stdout).toContain('END\\u001b[2J');
  expect(list.stdout).not.toContain('\u001b');

  // [c8.panel] An upstream tool may be granted: Allow… says what "any arguments" means for it.
  await card(page, id).locator('button.allow:enabled').waitFor();
  await card(page, id)
    .getByRole('button', { name: /^Allow/ })
    .click();
  const dialog = page.getByRole('dialog', { name: /allow/i });
  expect(await dialog.textContent()).toContain('any path and any content for write_file on notes');
  await screenshot(page, 'upstream-01b-allow-dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });

  await card(page, id)
    .getByRole('button', { name: /^Approve/ })
    .click();
  const result = await answer;
  expect(result._meta?.['ogf-broker/command']).toMatchObject({ pending_id: id, status: 'SUCCEEDED' });
  expect(textOf(result)).toMatch(/Successfully wrote/);
  expect(readFileSync(path, 'utf8')).toBe(long);
  await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
  expect(await card(page, id).innerText()).toContain('What the server answered');
  await screenshot(page, 'upstream-02-succeeded');
  expect(
    structured(await call(mcp, 'await_command_result', { pending_id: id, wait_seconds: 0 })).status,
  ).toBe('SUCCEEDED');
});
