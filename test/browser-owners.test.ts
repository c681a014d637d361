/**
 * Two named owners in real Chromium (contracts.md 9, 5 v2): owner `owner` logs in from the URL the daemon
 * printed, alice from the URL `ogf-broker token owner --name alice` printed, each in its own browser
 * context. Each panel names its owner; alice's approval shows on both panels as hers; rotating alice's token
 * logs her panel out at once while owner's stays live. Screenshots go to test-output/.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { auditRows } from './helpers/mcp.js';
import { addOwner, mcpClient, type OwnerLogin, ownerCatalog, queue, readMarks } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let alice: OwnerLogin;
const contexts: BrowserContext[] = [];
let ownerPage: Page;
let alicePage: Page;
let markFile: string;

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  contexts.push(context);
  return context.newPage();
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-owners-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
  ai = await mcpClient(d);
  alice = await addOwner(d, 'alice');
  browser = await launchBrowser();
  ownerPage = await newPage();
  alicePage = await newPage();
});

afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('[c9.decided-by] [c9.rotate] two owners, two browsers', () => {
  it('each panel names its signed-in owner; alice’s approval shows on both as hers', async () => {
    await loginPage(ownerPage, d);
    await alicePage.goto(alice.url);
    await alicePage.waitForURL(`${d.url}/`);
    await alicePage.locator('#connection[data-state="live"]').waitFor();
    await ownerPage.locator('#signed-in:not([hidden])').waitFor();
    await alicePage.locator('#signed-in:not([hidden])').waitFor();
    expect(await ownerPage.locator('#signed-in').textContent()).toBe('Signed in as owner');
    expect(await alicePage.locator('#signed-in').textContent()).toBe('Signed in as alice');

    const id = await queue(ai, 'mark', { word: 'alicedid' }, 'Two owners share this queue.');
    await card(ownerPage, id).waitFor();
    await ownerPage.mouse.move(1, 1);
    await card(alicePage, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    for (const p of [alicePage, ownerPage]) {
      const done = p.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`);
      await done.waitFor();
      expect(await done.locator('.decided').textContent()).toBe(' · approved by alice');
    }
    expect(readMarks(markFile)).toEqual(['alicedid']);
    const approve = auditRows(d).find((r) => r.command_id === id && r.action === 'approve');
    expect(approve).toMatchObject({ actor_kind: 'owner', actor: 'alice' });
    await screenshot(alicePage, 'owners-01-signed-in-as-alice');
    await screenshot(ownerPage, 'owners-02-owner-sees-alices-decision');
  });

  it('rotating alice’s token logs her panel out at once; owner’s panel stays live', async () => {
    const rotated = await addOwner(d, 'alice', true);
    await alicePage.locator('#connection[data-state="logged-out"]').waitFor();
    expect(await alicePage.locator('#signed-in').isHidden()).toBe(true);
    expect(await alicePage.locator('article.card').count()).toBe(0);
    await screenshot(alicePage, 'owners-03-alice-rotated-out');
    // Owner's panel was not touched: still live, and it still hears new requests.
    const id = await queue(ai, 'mark', { word: 'stilllive' });
    await card(ownerPage, id).waitFor();
    expect(await ownerPage.locator('#connection').getAttribute('data-state')).toBe('live');
    // The new URL logs alice back in.
    await alicePage.goto(rotated.url);
    await alicePage.waitForURL(`${d.url}/`);
    await alicePage.locator('#connection[data-state="live"]').waitFor();
    await card(alicePage, id).waitFor();
    expect(await alicePage.locator('#signed-in').textContent()).toBe('Signed in as alice');
  });
});
