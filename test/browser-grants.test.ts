/**
 * Grants in the owner panel (contracts.md 5 (v2), 8), in real Chromium against the real daemon: Allow… on a
 * card approves it and creates the grant in one step; the grants area lists it (uses and time left, who made
 * it) and follows every use; a later identical MCP call is approved without a click and its card names the
 * grant; Revoke… ends it and the next identical call waits again. Once by mouse, once by keyboard only. The
 * daemon's own answer (a second owner socket) is checked beside what the page shows. Screenshots go to
 * test-output/grants-*.png.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, OUTPUT_DIR, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let dataDir: string;
let watcher: OwnerSocket;
let markFile: string;

beforeAll(async () => {
  dataDir = makeDataDir('ogf-browser-grants-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: config() });
  ai = await mcpClient(d);
  watcher = await OwnerSocket.open(d);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  page = await context.newPage();
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await watcher?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

function config(): Record<string, unknown> {
  return ownerCatalog(markFile, {
    grants: [{ command: 'mark', client: '*', args: { word: 'cfg' }, note: 'kept in the config' }],
  });
}

/** run_command_wait for `mark`, waiting long enough for a grant-approved one to finish. */
async function mark(word: string): Promise<Frame> {
  const r = (await ai.callTool({
    name: 'run_command_wait',
    arguments: { command: 'mark', args: { word }, wait_seconds: 20 },
  })) as CallToolResult;
  return r.structuredContent as Frame;
}

/** The daemon's own word on a grant (not the page's). */
async function daemonGrant(id: string): Promise<Frame | undefined> {
  const r = await watcher.request({ type: 'grants', all: true });
  return (r.grants as Frame[]).find((g) => g.id === id);
}

const rows = () => page.locator('#grants-list [data-grant-id]');
const ownerRows = () => page.locator('#grants-list [data-grant-id][data-source="owner"]');

async function pointerAway(): Promise<void> {
  await page.mouse.move(1, 1);
}

describe('[c8.panel] grants in the owner panel', () => {
  it('[c8.panel] the grants area lists the config grant: any client, from the config file, no Revoke', async () => {
    const row = rows().first();
    await row.waitFor();
    expect(await rows().count()).toBe(1);
    const text = String(await row.textContent());
    expect(text).toContain('mark');
    expect(text).toContain('any client');
    expect(text).toContain('"word": "cfg"');
    expect(text).toContain('from the config file');
    expect(text).toContain('kept in the config');
    expect(text).toContain('no time limit');
    expect(await row.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);
  });

  it('[c8.panel] Allow… with these exact arguments, 15 min, 2 uses: approved and listed; the next identical call passes without a click and names the grant; Revoke… ends it and the next one waits', async () => {
    await pointerAway();
    const id = await queue(ai, 'mark', { word: 'twice' }, 'Marking twice to test grants.');
    const c = card(page, id);
    await c.waitFor();
    const allow = c.getByRole('button', { name: /^Allow/ });
    expect(await allow.count()).toBe(1);
    // Allow obeys click safety like Approve and Deny: born disabled, armed after its first second.
    expect(await allow.isDisabled()).toBe(true);
    await c.locator('button.allow:enabled').waitFor();
    await screenshot(page, 'grants-01-card-with-allow');

    await allow.click();
    const dialog = page.getByRole('dialog', { name: /allow/i });
    await dialog.waitFor();
    const words = String(await dialog.textContent());
    expect(words).toContain('local');
    expect(words).toContain('"word": "twice"');
    expect(words).toMatch(/any word for mark/);
    await dialog.getByLabel(/^These exact arguments/).check();
    await dialog.getByLabel('15 min').check();
    await dialog.getByLabel(/^How many times/).fill('2');
    await screenshot(page, 'grants-02-allow-dialog');
    await dialog.getByRole('button', { name: 'Approve and allow' }).click();
    await dialog.waitFor({ state: 'hidden' });

    await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    expect(readMarks(markFile)).toEqual(['twice']);
    const row = ownerRows().first();
    await row.filter({ hasText: '2 uses left' }).waitFor();
    expect(await ownerRows().count()).toBe(1);
    const gid = String(await row.getAttribute('data-grant-id'));
    expect(gid).toMatch(/^g_[A-Za-z0-9_-]+$/);
    const listed = String(await row.textContent());
    expect(listed).toContain('mark');
    expect(listed).toContain('client local');
    expect(listed).toContain('"word": "twice"');
    expect(listed).toMatch(/1[45] min left/);
    expect(listed).toContain('by owner');
    // Contract 16 (v4): the node whose commands it approves (here the one daemon's, its host name).
    expect(listed).toMatch(/on node [a-z][a-z0-9-]*/);
    // What the daemon made: exactly what the owner chose.
    const made = await daemonGrant(gid);
    expect(made).toMatchObject({
      command: 'mark',
      client: 'local',
      args: { word: 'twice' },
      uses_left: 2,
      source: 'owner',
      state: 'live',
    });
    expect(Date.parse(made!.expires_at) - Date.parse(made!.created_at)).toBe(900_000);
    expect((await watcher.view(id, (v) => v.decided_by !== undefined, 'decided')).decided_by).toBe('owner');
    await screenshot(page, 'grants-03-approved-and-listed');

    // The same call again: approved by the grant, no click.
    const again = await mark('twice');
    expect(again).toMatchObject({ status: 'SUCCEEDED' });
    expect(readMarks(markFile)).toEqual(['twice', 'twice']);
    const used = card(page, again.pending_id);
    await used.filter({ hasText: `allowed by grant ${gid}` }).waitFor();
    expect(String(await used.textContent())).toMatch(
      new RegExp(`allowed by grant ${gid} \\(owner, 1[45] min left\\)`),
    );
    expect(await used.getByRole('button', { name: /^(Approve|Allow|Deny)/ }).count()).toBe(0);
    await row.filter({ hasText: '1 use left' }).waitFor();
    expect((await daemonGrant(gid))?.uses_left).toBe(1);
    await screenshot(page, 'grants-04-used-by-grant');

    await pointerAway();
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await page.locator(`#grants-list [data-grant-id="${gid}"]`).waitFor({ state: 'detached' });
    expect(await ownerRows().count()).toBe(0);
    expect((await daemonGrant(gid))?.state).toBe('revoked');
    await used.filter({ hasText: `allowed by grant ${gid} (now ended)` }).waitFor();

    const waits = await queue(ai, 'mark', { word: 'twice' });
    const next = card(page, waits);
    await next.waitFor();
    expect(await next.getAttribute('data-state')).toBe('awaiting_review');
    expect(await next.getByRole('button', { name: /^Approve/ }).count()).toBe(1);
    expect(readMarks(markFile)).toEqual(['twice', 'twice']);
    await screenshot(page, 'grants-05-revoked-next-waits');
    await next.locator('button.deny:enabled').waitFor();
    await next.getByRole('button', { name: /^Deny/ }).click();
    await page.locator(`article[data-pending-id="${waits}"][data-status="DENIED"]`).waitFor();
  });

  it('[c8.panel] keyboard only: Tab to Allow…, Enter, Escape returns focus, then any arguments and 1 h chosen with keys, Enter submits; Revoke… by keyboard', async () => {
    await pointerAway();
    const id = await queue(ai, 'mark', { word: 'keys' });
    // A second card waits below it: once the first is decided, focus goes to the card taking its place.
    const after = await queue(ai, 'stubborn', {});
    const c = card(page, id);
    await c.waitFor();
    await card(page, after).waitFor();
    await c.focus();
    await c.locator('button.allow:enabled').waitFor();
    const focusedName = () =>
      page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        return a?.getAttribute('aria-label') ?? a?.textContent?.trim() ?? '';
      });
    for (let i = 0; i < 6 && !/^Allow/.test(await focusedName()); i++) await page.keyboard.press('Tab');
    expect(await focusedName()).toMatch(/^Allow/);

    const dialog = page.getByRole('dialog', { name: /allow/i });
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    // Escape closes it and gives focus back to the Allow button.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focusedName()).toMatch(/^Allow/);
    expect(await c.getAttribute('data-state')).toBe('awaiting_review');

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    // Focus starts on the scope; the arrow keys choose within a group, Tab moves between them.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe('exact');
    await page.keyboard.press('ArrowDown');
    expect(await dialog.getByLabel(/^Any arguments/).isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe('900');
    await page.keyboard.press('ArrowDown');
    expect(await dialog.getByLabel('1 h').isChecked()).toBe(true);
    await page.keyboard.press('Tab'); // how many times: left empty, unlimited
    await page.keyboard.press('Tab');
    await page.keyboard.type('typed with keys');
    await screenshot(page, 'grants-06-keyboard-dialog');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();

    const row = ownerRows().filter({ hasText: 'typed with keys' });
    await row.waitFor();
    const gid = String(await row.getAttribute('data-grant-id'));
    const text = String(await row.textContent());
    expect(text).toContain('any arguments');
    expect(text).toContain('unlimited');
    expect(text).toMatch(/(1 h|59 min) left/);
    expect(await daemonGrant(gid)).toMatchObject({ command: 'mark', client: 'local', state: 'live' });
    expect(await daemonGrant(gid)).not.toHaveProperty('args');
    expect(await daemonGrant(gid)).not.toHaveProperty('uses_left');
    // Focus went to the card that took the decided one's place, as after Approve (placement.ts keepFocus).
    expect(
      await page.evaluate(() =>
        document.activeElement?.closest('article.card')?.getAttribute('data-pending-id'),
      ),
    ).toBe(after);

    // Any arguments: other words pass too.
    const other = await mark('other');
    expect(other).toMatchObject({ status: 'SUCCEEDED' });
    await card(page, other.pending_id)
      .filter({ hasText: `allowed by grant ${gid}` })
      .waitFor();
    await screenshot(page, 'grants-07-keyboard-granted');

    // Revoke by keyboard: focus the button, Enter.
    await row.getByRole('button', { name: /^Revoke/ }).focus();
    await page.keyboard.press('Enter');
    await page.locator(`#grants-list [data-grant-id="${gid}"]`).waitFor({ state: 'detached' });
    expect((await daemonGrant(gid))?.state).toBe('revoked');
    expect(await page.evaluate(() => document.activeElement !== document.body)).toBe(true);
    await screenshot(page, 'grants-08-keyboard-revoked');
    await card(page, after).getByRole('button', { name: /^Deny/ }).click();
    await page.locator(`article[data-pending-id="${after}"][data-status="DENIED"]`).waitFor();
  });

  it('[c8.panel] is usable at phone width: the dialog fits the screen', async () => {
    const phone = await page.context().newPage();
    await phone.setViewportSize({ width: 390, height: 700 });
    await phone.goto(`${d.url}/`);
    await phone.locator('#connection[data-state="live"]').waitFor();
    // stubborn, not mark: whatever the tests above left allowed for mark cannot approve it.
    const id = await queue(ai, 'stubborn', {});
    const c = card(phone, id);
    await c.waitFor();
    await c.locator('button.allow:enabled').waitFor();
    await c.getByRole('button', { name: /^Allow/ }).click();
    const dialog = phone.getByRole('dialog', { name: /allow/i });
    await dialog.waitFor();
    expect(String(await dialog.textContent())).toContain('any arguments the catalog accepts for stubborn');
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(box.y + box.height).toBeLessThanOrEqual(700);
    const submit = (await dialog.getByRole('button', { name: 'Approve and allow' }).boundingBox())!;
    expect(submit.x + submit.width).toBeLessThanOrEqual(390);
    expect(
      await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await screenshot(phone, 'grants-09-phone-dialog');
    await dialog.screenshot({ path: join(OUTPUT_DIR, 'grants-09b-phone-dialog-itself.png') });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await c.getByRole('button', { name: /^Deny/ }).click();
    await phone.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    await screenshot(phone, 'grants-10-phone-list');
    await phone.close();
  });

  it('[c8.panel] a refused Allow (NotGrantable: the command left the catalog while it waited) is explained on the card; nothing is approved or granted', async () => {
    const id = await queue(ai, 'stubborn', {});
    await ai.close();
    await watcher.close();
    await page.close();
    expect(await d.stop()).toBe(0);
    // The same data dir, the catalog without stubborn: the waiting request survives the restart (rule 4).
    const next = config();
    delete (next.commands as Record<string, unknown>).stubborn;
    d = await startDaemon({ dataDir, config: next });
    ai = await mcpClient(d);
    watcher = await OwnerSocket.open(d);
    page = await context.newPage();
    await loginPage(page, d);
    const c = card(page, id);
    await c.waitFor();
    expect(await c.getAttribute('data-state')).toBe('awaiting_review');
    await c.locator('button.allow:enabled').waitFor();
    await c.getByRole('button', { name: /^Allow/ }).click();
    const dialog = page.getByRole('dialog', { name: /allow/i });
    await dialog.getByRole('button', { name: 'Approve and allow' }).click();
    const msg = c.locator('.card-msg', { hasText: 'NotGrantable' });
    await msg.waitFor();
    expect(String(await msg.textContent())).toMatch(/cannot be allowed for a while.*Nothing was approved/);
    expect(await c.getAttribute('data-state')).toBe('awaiting_review');
    expect((await watcher.view(id, () => true, 'the card')).state).toBe('awaiting_review');
    const all = await watcher.request({ type: 'grants', all: true });
    expect((all.grants as Frame[]).filter((g) => g.command === 'stubborn')).toEqual([]);
    // The buttons arm again after the reply: the owner can still decide.
    await c.locator('button.deny:enabled').waitFor();
    await screenshot(page, 'grants-11-not-grantable-explained');
    await c.getByRole('button', { name: /^Deny/ }).click();
    await page.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
  });

  it('[c8.panel] an Allow lost with the connection: after the reconnect the card can be decided again, nothing was approved', async () => {
    const tab = await context.newPage();
    let dropped = false;
    await tab.routeWebSocket(/\/owner\/ws$/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((m) => {
        // The approve-with-grant never reaches the daemon: the connection drops under it.
        if (!dropped && String(m).includes('"grant"')) {
          dropped = true;
          void ws.close({ code: 1001, reason: 'network went away' });
          void server.close();
          return;
        }
        server.send(m);
      });
    });
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    const id = await queue(ai, 'mark', { word: 'lost' });
    const c = card(tab, id);
    await c.locator('button.allow:enabled').waitFor();
    await c.getByRole('button', { name: /^Allow/ }).click();
    await tab
      .getByRole('dialog', { name: /allow/i })
      .getByRole('button', { name: 'Approve and allow' })
      .click();
    expect(dropped).toBe(true);
    await tab.locator('#connection[data-state="waiting"]').waitFor();
    await tab.locator('#connection[data-state="live"]').waitFor();
    // The reply to the lost frame never comes; the fresh snapshot decides, and the card is usable again.
    await c.locator('button.approve:enabled').waitFor();
    await c.locator('button.allow:enabled').waitFor();
    expect(await c.getAttribute('data-state')).toBe('awaiting_review');
    expect((await watcher.view(id, () => true, 'the card')).state).toBe('awaiting_review');
    expect(readMarks(markFile)).not.toContain('lost');
    await screenshot(tab, 'grants-12-after-lost-allow');
    await c.getByRole('button', { name: /^Deny/ }).click();
    await tab.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    await tab.close();
  });
});
