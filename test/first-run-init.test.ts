/**
 * Contract 17, in real Chromium: the panel of a daemon with nothing gated (no catalog command, no upstream)
 * names `ogf-broker init` — the exact command for this data dir — and that command, pasted into a shell,
 * writes the starter config. Real daemon on a non-default data dir.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, loginPage } from './helpers/browser.js';
import { type RunningDaemon, startDaemon } from './helpers/daemon.js';

const top = mkdtempSync(join(tmpdir(), 'ogf-first-run-init-'));
const dataDir = join(top, 'broker data');
mkdirSync(dataDir, { mode: 0o700 });
let d: RunningDaemon;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  d = await startDaemon({ dataDir });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

it('[c17.init] with nothing gated, the first-run panel names ogf-broker init for this data dir, and it works as pasted', async () => {
  const help = page.locator('#first-run');
  await help.waitFor({ state: 'visible' });
  const command = await help.locator('.fr-init').innerText();
  expect(command).toMatch(/ init --data-dir '.*broker data'$/);
  // Pasted into a shell (HOME a temp dir: the default folder ~/ogf-notes goes there), it writes the config.
  const run = spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8', env: { ...process.env, HOME: top } });
  expect(run.status, run.stderr).toBe(0);
  expect(existsSync(join(dataDir, 'config.json'))).toBe(true);
  expect(existsSync(join(top, 'ogf-notes', 'drafts'))).toBe(true);
});
