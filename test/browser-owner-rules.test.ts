/**
 * Contract 18 in the owner panel, in real Chromium against the real daemon: Allow… → "Always" shows the
 * rule's expression and its test against the past before it is saved, approves the card and saves an
 * owner's allow rule that lets the next request through without a click; the Rules area lists the config's
 * rule read-only and the owner's with its author, time and count; Edit is tested before Save; Disable;
 * Remove … asks first. At 1280 and 390 px; screenshots in /tmp/rules-*.png.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let watcher: OwnerSocket;
let browser: Browser;

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-owner-rules-');
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(join(dataDir, 'marks.txt'), {
      rules: [{ id: 'cfg-no-xx', when: "args.word == 'xx'", decision: 'deny', note: 'the config says no' }],
    }),
  });
  ai = await mcpClient(d);
  watcher = await OwnerSocket.open(d);
  browser = await launchBrowser();
  // A known past: one `mark` the owner approved, one denied.
  for (const [word, type] of [
    ['a1', 'approve'],
    ['a2', 'deny'],
  ] as const) {
    const id = await queue(ai, 'mark', { word });
    const v = await watcher.view(id, () => true, word);
    expect((await watcher.request({ type, id, version: v.version })).ok).toBe(true);
  }
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await watcher?.close();
  await ai?.close();
  await d?.stop();
});

async function owners(): Promise<Frame[]> {
  return ((await watcher.request({ type: 'rules' })).rules as Frame[]).filter((r) => r.source === 'owner');
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `/tmp/rules-${name}.png`, fullPage: false });
}

/** Opens Allow… on a new request's card, chooses any arguments and Always; waits for the test line. */
async function always(
  page: Page,
  word: string,
): Promise<{ id: string; dialog: ReturnType<Page['getByRole']> }> {
  const id = await queue(ai, 'mark', { word });
  const c = card(page, id);
  await c.waitFor();
  await page.mouse.move(1, 1);
  await c.locator('button.allow:enabled').waitFor();
  await c.getByRole('button', { name: /^Allow/ }).click();
  const dialog = page.getByRole('dialog', { name: /allow/i });
  await dialog.waitFor();
  await dialog.getByLabel('Any arguments').check();
  await dialog.getByLabel('Always', { exact: true }).check();
  await dialog.locator('.allow-label', { hasText: 'The rule (allow)' }).waitFor();
  await dialog.locator('#allow-test', { hasText: /^Would have allowed/ }).waitFor();
  return { id, dialog };
}

describe('[c18.panel] Always, and the Rules area, in Chromium', () => {
  it('1280 px: Always shows its test, then saves the rule; the Rules area edits, disables and removes it', {
    timeout: 120_000,
  }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await loginPage(page, d);
    const rules = page.locator('#rules');
    await rules.locator('[data-rule-id="cfg-no-xx"]').waitFor();
    expect(await rules.locator('[data-rule-id="cfg-no-xx"] button').count()).toBe(0);
    expect(await rules.locator('[data-rule-id="cfg-no-xx"]').textContent()).toContain('Edit the config file');

    const { id, dialog } = await always(page, 'w1');
    const expression = await dialog.locator('#allow-expression').textContent();
    expect(expression).toBe('command == "mark" && client == "local"');
    // a1 approved, a2 denied, and this one waiting: all `mark` from local.
    expect(await dialog.locator('#allow-test').textContent()).toBe(
      'Would have allowed 3 of your last 3 requests — 1 of them you denied.',
    );
    expect(await dialog.locator('#allow-uses').isDisabled()).toBe(true);
    await shot(page, 'always-1280');
    await dialog.getByRole('button', { name: 'Approve and allow' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await watcher.view(id, (v) => v.state === 'succeeded', 'the card approved and run');
    const [rule] = await owners();
    expect(rule).toMatchObject({ when: expression, decision: 'allow', created_by: 'owner', enabled: true });

    // The next request of the kind runs without a click.
    const next = await queue(ai, 'mark', { word: 'w2' });
    expect(await watcher.view(next, () => true, 'w2')).toMatchObject({ decided_by: `rule:${rule!.id}` });
    const row = rules.locator(`[data-rule-id="${rule!.id}"]`);
    await page.mouse.move(1, 1);
    // The list is read when it changes here; a decision elsewhere shows at the next read: edit reads it.
    await row.waitFor();
    expect(await row.locator('.grant-who').textContent()).toMatch(/^by owner at \S/);

    // Edit: tested before Save is offered.
    await row.getByRole('button', { name: `Edit rule ${rule!.id}` }).click();
    const edit = row.locator('.rule-edit');
    await edit.locator('.rule-test', { hasText: /^Would have matched/ }).waitFor();
    await edit.locator('textarea').fill('command == "mark" && args.word.startsWith("b")');
    expect(await edit.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await edit.getByRole('button', { name: 'Test' }).click();
    await edit
      .locator('.rule-test', { hasText: /^Would have matched 0 of your last \d+ requests\.$/ })
      .waitFor();
    await edit.locator('select').selectOption('deny');
    await edit.getByRole('button', { name: 'Test' }).click();
    await edit.locator('.rule-test', { hasText: /^Would have matched/ }).waitFor();
    await shot(page, 'edit-1280');
    await edit.getByRole('button', { name: 'Save' }).click();
    await row.locator('.rule-decision.decision-deny').waitFor();
    expect((await owners())[0]).toMatchObject({
      when: 'command == "mark" && args.word.startsWith("b")',
      decision: 'deny',
    });
    // A bad expression: said on the row, and Save stays off.
    await row.getByRole('button', { name: `Edit rule ${rule!.id}` }).click();
    await edit.locator('textarea').fill('args.word ==');
    await edit.getByRole('button', { name: 'Test' }).click();
    await edit.locator('.rule-test', { hasText: /^BadMessage: when / }).waitFor();
    expect(await edit.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await edit.getByRole('button', { name: 'Cancel' }).click();

    await row.getByRole('button', { name: `Disable rule ${rule!.id}` }).click();
    await rules.locator(`li.disabled[data-rule-id="${rule!.id}"]`).waitFor();
    expect((await owners())[0]!.enabled).toBe(false);

    await row.getByRole('button', { name: `Remove rule ${rule!.id}` }).click();
    await row.locator('.rule-confirm').waitFor();
    await shot(page, 'remove-1280');
    await row.locator('.rule-confirm').getByRole('button', { name: 'Remove' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await owners()).toEqual([]);
    await context.close();
  });

  it('390 px: the dialog with Always, and the Rules area, fit the phone', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await loginPage(page, d);
    const { dialog } = await always(page, 'p1');
    const box = await dialog.boundingBox();
    expect(box!.width).toBeLessThanOrEqual(390);
    await shot(page, 'always-390');
    await dialog.getByRole('button', { name: 'Approve and allow' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const rules = page.locator('#rules');
    const row = rules.locator('li.source-owner');
    await row.waitFor();
    await row.scrollIntoViewIfNeeded();
    const rowBox = await row.boundingBox();
    expect(rowBox!.x + rowBox!.width).toBeLessThanOrEqual(390);
    await shot(page, 'area-390');
    await context.close();
  });
});
