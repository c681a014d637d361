/**
 * Quorum in the owner panel (contracts.md 9; 5 (v2): "a card needing several owners shows who approved and
 * how many remain"), in real Chromium against the real daemon. A catalog command needing two owners
 * (`deploy`, appending to a file like `mark`, so its launches can be counted) is shown with who approved,
 * when, and how many remain, kept current by upserts; the owner who already approved sees that in place
 * of Approve (Deny stays); no Allow… (it can never be granted); the finished card names every approver.
 *
 * Two parts. The first needs one owner only: `owner` in a browser context, plus the same owner over a
 * Bearer socket for the stale-tab case (AlreadyApproved explained). The second needs two named owners
 * (`token owner --name bob`, contract 9): `owner` in context A and `bob` in context B, both approving in
 * either panel, and bob denying after owner approved. The daemon's own word (a watcher socket) is checked
 * beside what each page shows. Screenshots go to test-output/quorum-*.png.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let ctxA: BrowserContext;
let pageA: Page;
let dataDir: string;
let markFile: string;
/** Owner `owner` over a Bearer socket: the daemon's own word, and a second "tab" of the same owner. */
let watcher: OwnerSocket;

function config(): Record<string, unknown> {
  const base = ownerCatalog(markFile) as { commands: Record<string, Record<string, unknown>> };
  return {
    ...base,
    commands: {
      ...base.commands,
      deploy: { ...base.commands.mark, description: 'Deploy (two owners must approve)', approvals: 2 },
    },
  };
}

beforeAll(async () => {
  dataDir = makeDataDir('ogf-browser-quorum-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: config() });
  ai = await mcpClient(d);
  watcher = await OwnerSocket.open(d);
  browser = await launchBrowser();
  ctxA = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  pageA = await ctxA.newPage();
  await loginPage(pageA, d);
});

afterAll(async () => {
  await browser?.close();
  await watcher?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(dataDir, { recursive: true, force: true });
});

/** The card at (at least) this version: waits for the state, never for an event that may be over. */
function cardAt(page: Page, id: string, version: number) {
  return page.locator(`article[data-pending-id="${id}"][data-version="${version}"]`);
}

/** How this page writes the daemon's timestamp (the panel shows the owner's local time of day). */
function shown(page: Page, iso: string): Promise<string> {
  return page.evaluate((at) => new Date(at).toLocaleTimeString(), iso);
}

async function quorumText(page: Page, id: string): Promise<string> {
  return String(await card(page, id).locator('.quorum').textContent());
}

/** The daemon's view once it has `n` approvals. */
function approvals(id: string, n: number): Promise<Frame> {
  return watcher.view(id, (v) => (v.approvals ?? []).length === n, `${n} approval(s)`);
}

async function armed(page: Page, id: string): Promise<void> {
  await card(page, id).locator('button.deny:enabled').waitFor();
}

/** A screenshot from the top of the page (a card leaving the queue can leave the page scrolled). */
async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

async function pointerAway(page: Page): Promise<void> {
  await page.mouse.move(1, 1);
}

describe('[c2.rule-5] quorum in the panel (one owner)', () => {
  it('[c2.rule-5] a card needing 2 owners says so and has no Allow…; an ordinary one beside it still has Allow…', async () => {
    await pointerAway(pageA);
    const plain = await queue(ai, 'mark', { word: 'plain' });
    const id = await queue(ai, 'deploy', { word: 'nogrant' }, 'Two owners must agree on this.');
    await armed(pageA, id);
    await armed(pageA, plain);
    expect(await quorumText(pageA, id)).toBe('Needs 2 owners · no approval yet · 2 more needed');
    expect(
      await card(pageA, id)
        .getByRole('button', { name: /^Allow/ })
        .count(),
    ).toBe(0);
    expect(
      await card(pageA, id)
        .getByRole('button', { name: /^Approve/ })
        .isEnabled(),
    ).toBe(true);
    expect(
      await card(pageA, plain)
        .getByRole('button', { name: /^Allow/ })
        .count(),
    ).toBe(1);
    expect(await card(pageA, plain).locator('.quorum').count()).toBe(0);
    await shot(pageA, 'quorum-01-needs-two');
    for (const x of [plain, id]) {
      const v = await watcher.view(x, () => true, 'seen');
      expect((await watcher.request({ type: 'deny', id: x, version: v.version })).ok).toBe(true);
    }
    await pageA.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    expect(await quorumText(pageA, id)).toBe('Needed 2 owners · denied by owner (you)');
  });

  it('[c2.rule-5] after the owner approves: 1 of 2 shown, "You approved at …" where Approve was, Deny still works; `a` explains and sends nothing', async () => {
    await pointerAway(pageA);
    const id = await queue(ai, 'deploy', { word: 'halfway' });
    await armed(pageA, id);
    await card(pageA, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    const v = await approvals(id, 1);
    expect(v).toMatchObject({ state: 'awaiting_review', version: 2, approvals: [{ by: 'owner' }] });
    const at = await shown(pageA, v.approvals[0].at);
    await cardAt(pageA, id, 2).waitFor();
    const c = card(pageA, id);
    expect(await quorumText(pageA, id)).toBe(
      `Needs 2 owners · approved by owner (you) at ${at} · 1 more needed`,
    );
    expect(await c.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect(String(await c.locator('.mine-approved').textContent())).toBe(
      `You approved at ${at} — waiting for 1 more owner`,
    );
    expect(String(await c.locator('.state-badge').textContent())).toBe('PENDING · waiting for 1 more owner');
    expect(String(await pageA.locator('#queue-count').textContent())).toBe(
      'nothing waits for you · 1 for other owners',
    );
    await armed(pageA, id);
    await shot(pageA, 'quorum-02-you-approved');
    // At phone width the words and Deny still fit the card.
    await pageA.setViewportSize({ width: 390, height: 844 });
    const box = await c.boundingBox();
    for (const part of [c.locator('.mine-approved'), c.getByRole('button', { name: /^Deny/ })]) {
      const b = await part.boundingBox();
      expect(b!.x + b!.width).toBeLessThanOrEqual(box!.x + box!.width);
    }
    await shot(pageA, 'quorum-02b-you-approved-phone');
    await pageA.setViewportSize({ width: 1100, height: 900 });
    // The shortcut stands for the button that is not there: it explains, and the daemon hears nothing.
    await c.focus();
    await pageA.keyboard.press('a');
    await c.locator('.card-msg').filter({ hasText: 'You already approved this' }).waitFor();
    expect(readMarks(markFile)).not.toContain('halfway');
    // One deny by any owner denies, even after an approval.
    await c.getByRole('button', { name: /^Deny/ }).click();
    await pageA.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    expect(await quorumText(pageA, id)).toBe(
      `Needed 2 owners · approved by owner (you) at ${at} · denied by owner (you)`,
    );
    expect(await watcher.view(id, (x) => x.status === 'DENIED', 'denied')).toMatchObject({
      decided_by: 'owner',
      reason: 'OwnerDenied',
    });
    expect(readMarks(markFile)).not.toContain('halfway');
    await shot(pageA, 'quorum-03-denied-after-one');
  });

  it('[c2.rule-5] a stale tab of the same owner that approves again gets AlreadyApproved, explained on the card', async () => {
    const id = await queue(ai, 'deploy', { word: 'staletab' });
    const tab = await ctxA.newPage();
    // The tab's frames are held (in order) while the owner approves elsewhere, as a slow network would.
    let holding = false;
    const held: Array<string | Buffer> = [];
    let forward: (m: string | Buffer) => void = () => {};
    await tab.routeWebSocket(/\/owner\/ws$/, (ws) => {
      const server = ws.connectToServer();
      forward = (m) => ws.send(m);
      server.onMessage((m) => {
        if (holding) held.push(m);
        else ws.send(m);
      });
    });
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    await pointerAway(tab);
    await armed(tab, id);
    holding = true;
    expect((await watcher.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
    await waitFor(
      () => held.some((m) => String(m).includes(`"type":"upsert"`)) || undefined,
      'the held upsert',
    );
    await card(tab, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    await waitFor(() => held.some((m) => String(m).includes('AlreadyApproved')) || undefined, 'the reply');
    holding = false;
    for (const m of held.splice(0)) forward(m);
    await cardAt(tab, id, 2).waitFor();
    const c = card(tab, id);
    await c.locator('.card-msg').filter({ hasText: 'AlreadyApproved' }).waitFor();
    expect(String(await c.locator('.card-msg').textContent())).toContain('You already approved this request');
    expect(String(await c.locator('.mine-approved').textContent())).toMatch(
      /^You approved at .+ — waiting for 1 more owner$/,
    );
    expect(await c.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    await shot(tab, 'quorum-04-already-approved');
    await tab.close();
    expect((await watcher.request({ type: 'deny', id, version: 2 })).ok).toBe(true);
    expect(readMarks(markFile)).not.toContain('staletab');
  });
});

describe('[c2.rule-5] quorum in the panel (two named owners: owner in context A, bob in context B)', () => {
  let ctxB: BrowserContext;
  let pageB: Page;

  beforeAll(async () => {
    // Contract 9: `token owner --name bob` creates owner bob and prints its login URL as the last line.
    const made = await runCli(['token', 'owner', '--name', 'bob', '--data-dir', dataDir]);
    expect(made.code, made.stderr).toBe(0);
    const url = made.stdout.trimEnd().split('\n').at(-1)!;
    expect(url).toMatch(/\/login#token=\S+$/);
    ctxB = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    pageB = await ctxB.newPage();
    await pageB.goto(url);
    await pageB.waitForURL(`${d.url}/`);
    await pageB.locator('#connection[data-state="live"]').waitFor();
  });

  afterAll(async () => {
    await ctxB?.close();
  });

  it('[c2.rule-5] owner approves in A: both cards show 1 of 2; A says "You approved…", B still has an active Approve; B approves: it runs once and both cards say approved by owner and bob', async () => {
    await pointerAway(pageA);
    await pointerAway(pageB);
    const id = await queue(ai, 'deploy', { word: 'together' }, 'Both of you, please.');
    await armed(pageA, id);
    await armed(pageB, id);
    await card(pageA, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    const half = await approvals(id, 1);
    const at1 = await shown(pageA, half.approvals[0].at);
    await cardAt(pageA, id, 2).waitFor();
    await cardAt(pageB, id, 2).waitFor();
    expect(await quorumText(pageA, id)).toBe(
      `Needs 2 owners · approved by owner (you) at ${at1} · 1 more needed`,
    );
    expect(await quorumText(pageB, id)).toBe(`Needs 2 owners · approved by owner at ${at1} · 1 more needed`);
    expect(
      await card(pageA, id)
        .getByRole('button', { name: /^Approve/ })
        .count(),
    ).toBe(0);
    expect(String(await card(pageA, id).locator('.mine-approved').textContent())).toBe(
      `You approved at ${at1} — waiting for 1 more owner`,
    );
    await armed(pageB, id);
    expect(
      await card(pageB, id)
        .getByRole('button', { name: /^Approve/ })
        .isEnabled(),
    ).toBe(true);
    expect(await card(pageB, id).locator('.mine-approved').count()).toBe(0);
    expect(String(await card(pageB, id).locator('.state-badge').textContent())).toBe(
      'PENDING · waiting for your decision',
    );
    expect(String(await pageB.locator('#queue-count').textContent())).toBe('1 waiting for you');
    expect(readMarks(markFile)).not.toContain('together');
    await shot(pageA, 'quorum-05-owner-approved-A');
    await shot(pageB, 'quorum-06-owner-approved-B');

    await card(pageB, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    const done = await watcher.view(id, (v) => v.status === 'SUCCEEDED', 'succeeded');
    expect(done).toMatchObject({ decided_by: 'bob', approvals: [{ by: 'owner' }, { by: 'bob' }] });
    const at2 = await shown(pageA, done.approvals[1].at);
    for (const [page, you] of [
      [pageA, 'owner'],
      [pageB, 'bob'],
    ] as const) {
      await page.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
      const who = (n: string) => (n === you ? `${n} (you)` : n);
      expect(await quorumText(page, id)).toBe(
        `Needed 2 owners · approved by ${who('owner')} at ${at1} and ${who('bob')} at ${at2}`,
      );
      expect(await card(page, id).locator('.controls').count()).toBe(0);
    }
    expect(readMarks(markFile).filter((m) => m === 'together')).toEqual(['together']);
    await shot(pageA, 'quorum-07-succeeded-A');
    await shot(pageB, 'quorum-08-succeeded-B');
  });

  it('[c2.rule-5] owner approves in A, bob denies in B: denied, nothing ran, both cards say who approved and who denied', async () => {
    await pointerAway(pageA);
    await pointerAway(pageB);
    const id = await queue(ai, 'deploy', { word: 'vetoed' });
    await armed(pageA, id);
    await card(pageA, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    const half = await approvals(id, 1);
    const at1 = await shown(pageA, half.approvals[0].at);
    await cardAt(pageB, id, 2).waitFor();
    await armed(pageB, id);
    await card(pageB, id)
      .getByLabel(/^Note to the AI/)
      .fill('not this week');
    await card(pageB, id).getByRole('button', { name: /^Deny/ }).click();
    const done = await watcher.view(id, (v) => v.status === 'DENIED', 'denied');
    expect(done).toMatchObject({ decided_by: 'bob', reason: 'OwnerDenied', approvals: [{ by: 'owner' }] });
    await pageA.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    await pageB.locator(`article[data-pending-id="${id}"][data-status="DENIED"]`).waitFor();
    expect(await quorumText(pageA, id)).toBe(
      `Needed 2 owners · approved by owner (you) at ${at1} · denied by bob`,
    );
    expect(await quorumText(pageB, id)).toBe(
      `Needed 2 owners · approved by owner at ${at1} · denied by bob (you)`,
    );
    expect(String(await card(pageA, id).textContent())).toContain('not this week');
    expect(readMarks(markFile)).not.toContain('vetoed');
    await shot(pageA, 'quorum-09-denied-by-bob-A');
  });
});
