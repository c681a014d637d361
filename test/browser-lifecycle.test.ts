/**
 * The owner panel across a command's whole life in real Chromium (contracts.md 2, 5; issue 4): a countdown
 * that runs out into DENIED/ReviewExpired, an UNKNOWN command reconciled (never retried), and a cue shown
 * in words and as a picture — with a scan proving the cue's session UUID reaches no frame, page or
 * terminal output the owner receives.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { CLI, makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { callTool, mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';

const SESSION_UUID = '3f9a1c2e-7b4d-4e8f-9a0b-1c2d3e4f5a6b';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Everything the browser received: WebSocket frames and HTTP bodies. */
const received: string[] = [];

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-life-');
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(join(dataDir, 'marks.txt'), {
      review_timeout_s: 10,
      ogf_bridge: { url: 'ws://127.0.0.1:1/ogf-bridge', delivery_timeout_ms: 500 },
    }),
  });
  ai = await mcpClient(d);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  context.on('page', (p) => watch(p));
  page = await context.newPage();
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

function watch(p: Page): void {
  p.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(String(f.payload))));
  p.on('response', (r) => {
    r.text().then(
      (t) => received.push(t),
      () => {},
    );
  });
}

function state(id: string, status: string): string {
  return `article[data-pending-id="${id}"][data-status="${status}"]`;
}

describe('owner panel lifecycle in Chromium', () => {
  it('[c2.rule-1] counts down live and shows the expiry as DENIED · ReviewExpired', async () => {
    const id = await queue(ai, 'mark', { word: 'expire' }, 'Nobody will answer this one.');
    const countdown = card(page, id).locator('.countdown');
    await countdown.waitFor();
    const first = await countdown.innerText();
    expect(first).toMatch(/expires in 0:(0\d|10)/);
    await page.waitForFunction(([sel, before]) => document.querySelector(sel)?.textContent !== before, [
      `article[data-pending-id="${id}"] .countdown`,
      first,
    ] as const);
    await screenshot(page, 'owner-10-countdown');
    await page.locator(state(id, 'DENIED')).waitFor({ timeout: 30_000 });
    const text = await card(page, id).innerText();
    expect(text).toContain('DENIED · ReviewExpired');
    expect(text).toMatch(/nobody decided in time/i);
    await expect(
      card(page, id)
        .getByRole('button', { name: /^Approve/ })
        .count(),
    ).resolves.toBe(0);
    await screenshot(page, 'owner-11-expired');
  });

  it('[c2.rule-2] reconciles an UNKNOWN command (delivered / not delivered + note), never offering a retry', async () => {
    const id = await queue(ai, 'stubborn', {}, 'Runs past its deadline.');
    await card(page, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    await page.locator(state(id, 'UNKNOWN')).waitFor({ timeout: 40_000 });
    const c = card(page, id);
    expect(await c.innerText()).toContain('UNKNOWN · KilledAtDeadline');
    expect(await c.getByRole('button', { name: /retry|again|re-run/i }).count()).toBe(0);
    expect(await page.locator('#attention').innerText()).toMatch(/1 need reconciling/);
    const reconcile = c.getByRole('button', { name: /^Reconcile/ });
    await reconcile.click();
    await c.locator('.card-msg', { hasText: 'Choose' }).waitFor();
    await screenshot(page, 'owner-12-unknown');
    await c.getByLabel(/not delivered/).check();
    await c.getByLabel(/Reconciliation note/).fill('Checked: the file was not written');
    await reconcile.click();
    await c.locator('.reconciled').waitFor();
    expect(await c.locator('.reconciled').innerText()).toMatch(
      /not delivered.*Checked: the file was not written/,
    );
    expect(await c.getAttribute('data-status')).toBe('UNKNOWN');
    const result = await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 });
    expect(result).toMatchObject({
      status: 'UNKNOWN',
      reason: 'KilledAtDeadline',
      reconciliation: { outcome: 'not_delivered', note: 'Checked: the file was not written' },
    });
    await screenshot(page, 'owner-13-reconciled');
  });

  it('[c3.3.session-secret] shows a cue in words and as a picture, and its session UUID reaches the owner nowhere', async () => {
    const owner = await OwnerSocket.open(d);
    // The pointer leaves the history card it reconciled: over it, an arrival would wait behind the
    // "new requests" button rather than move it (contract 5 (v2), test/browser-click-safety.test.ts).
    await page.mouse.move(1, 1);
    const cue = await callTool(ai, 'ogf_cue', {
      session_id: SESSION_UUID.toUpperCase(),
      action: 'wave',
      emotion: 'happy',
      intensity: 0.8,
      gaze: 'user',
      ttl_ms: 4000,
      message: 'Hello from the test',
      wait_seconds: 0,
    });
    const id = cue.pending_id as string;
    expect(id).toEqual(expect.any(String));
    const c = card(page, id);
    await c.waitFor();
    const face = c.locator('svg.cue-face');
    expect(await face.getAttribute('data-emotion')).toBe('happy');
    expect(await face.getAttribute('data-action')).toBe('wave');
    expect(await face.getAttribute('aria-label')).toMatch(
      /happy.*waves.*at you.*Hello from the test.*4\.0 s/,
    );
    const words = await c.locator('.cue-words').innerText();
    for (const w of ['happy', 'waves', 'at you', '0.8', 'Hello from the test', '4.0 s'])
      expect(words).toContain(w);
    expect(await c.locator('.session code').innerText()).toMatch(/^sess·[0-9a-f]{6}$/);
    expect(await c.locator('.argv').innerText()).toContain('--session-file');
    await screenshot(page, 'owner-14-cue');
    await c.getByRole('button', { name: /^Approve/ }).click();
    await page.locator(`${state(id, 'ERROR')}, ${state(id, 'UNKNOWN')}`).waitFor({ timeout: 30_000 });
    await screenshot(page, 'owner-15-cue-finished');
    const history = await owner.request({ type: 'history', limit: 500 });
    expect(history.commands.some((v: { id: string }) => v.id === id)).toBe(true);
    const again = await OwnerSocket.open(d);
    const list = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'list', '--all', '--data-dir', d.dataDir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
      });
      child.stderr.on('data', (b: Buffer) => {
        out += b.toString();
      });
      child.on('close', () => resolve(out));
    });
    expect(list).toContain(id);
    const pages = [
      await page.content(),
      await (await fetch(`${d.url}/`)).text(),
      await (await fetch(`${d.url}/login`)).text(),
    ];
    const everything = [...received, ...owner.raw, ...again.raw, list, ...pages, d.stderr(), d.stdout()].join(
      '\n',
    );
    expect(received.length).toBeGreaterThan(5);
    expect(everything).toContain(id);
    expect(everything.toLowerCase()).not.toContain(SESSION_UUID);
    expect(everything.toLowerCase()).not.toContain(SESSION_UUID.replaceAll('-', ''));
    await owner.close();
    await again.close();
  });
});
