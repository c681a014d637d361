/**
 * Contract 21 in real Chromium: a card says what the process may touch before the owner decides — a confined
 * catalog command "confined: writes only under …; no network", an unconfined one "not confined" in the
 * warning colour — at desktop and phone width. Screenshots go to test-output/shots-sandbox/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, OUTPUT_DIR } from './helpers/browser.js';
import { type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { callTool, mcpClient } from './helpers/owner.js';

const SHOTS = join(OUTPUT_DIR, 'shots-sandbox');
let folder: string;
let d: RunningDaemon;
let browser: Browser;
let page: Page;

const touch = (sandbox: Record<string, unknown> | false) => ({
  description: 'Touches a file',
  argv: [process.execPath, '-e', "require('fs').writeFileSync(process.argv[1], '')", '{p}'],
  params: { p: { type: 'string', max_length: 200, pattern: '^/[A-Za-z0-9/._-]+$' } },
  sandbox,
});

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  folder = mkdtempSync('/var/tmp/ogf-sandbox-browser-');
  d = await startDaemon({
    config: { commands: { touch: touch({ writable: [folder] }), 'touch-anywhere': touch(false) } },
  });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await loginPage(page, d);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe('[c21.shown] the card says the reach (contract 21)', () => {
  it('confined and unconfined commands, at 1280 and 390 px', async () => {
    const ai = await mcpClient(d);
    try {
      const ask = async (command: string) =>
        String(
          (await callTool(ai, 'run_command_wait', { command, args: { p: `${folder}/x` }, wait_seconds: 0 }))
            .pending_id,
        );
      const confined = await ask('touch');
      const open = await ask('touch-anywhere');
      const reach = (id: string) => card(page, id).locator('p.reach');
      await reach(confined).waitFor();
      await reach(open).waitFor();
      expect(await reach(confined).textContent()).toBe(`confined: writes only under ${folder}; no network`);
      expect(await reach(open).textContent()).toBe('not confined');
      expect(await reach(open).getAttribute('class')).toContain('unconfined');
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        // The line fits the card at phone width: no horizontal scrolling of the page.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(
          true,
        );
        await page.screenshot({ path: join(SHOTS, `reach-${width}.png`), fullPage: true });
      }
    } finally {
      await ai.close();
    }
  });
});
