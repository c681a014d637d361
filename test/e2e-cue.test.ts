/**
 * The whole path a new user sees (issue 5, "Done means"): a real MCP client asks `ogf_cue`, the owner
 * approves it by clicking in the owner panel in Chromium, the reference avatar app's page (also in
 * Chromium) plays the cue, and the AI gets SUCCEEDED with `delivery.applied_at`. Screenshots of both
 * pages are kept in test-output/e2e-cue-*.png. The session UUID is never shown in the owner panel.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { exited, ROOT, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, structured, textOf } from './helpers/mcp.js';

let app: ChildProcess;
let d: RunningDaemon;
let mcp: Client;
let browser: Browser;
let owner: Page;
let avatar: Page;

beforeAll(async () => {
  app = spawn(process.execPath, [join(ROOT, 'dist', 'examples', 'avatar-app', 'main.js'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  app.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const [, pageUrl, bridgeUrl] = await waitFor(
    () => /page (\S+) bridge (\S+)/.exec(out) ?? undefined,
    'the avatar app',
  );
  d = await startDaemon({ config: { ogf_bridge: { url: bridgeUrl, delivery_timeout_ms: 5000 } } });
  mcp = await httpClient(d.info.mcp_url, d.mcpToken);
  browser = await launchBrowser();
  owner = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  await loginPage(owner, d);
  avatar = await browser.newPage({ viewport: { width: 1100, height: 720 } });
  await avatar.goto(pageUrl!);
  await avatar.locator('[data-session-id]').filter({ hasText: /-/ }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  await d?.stop();
  if (app && app.exitCode === null) {
    app.kill('SIGTERM');
    await exited(app);
  }
});

it('[c3.3.session-secret] MCP ogf_cue → owner approves in the panel → the avatar page plays it → SUCCEEDED with delivery', async () => {
  // The user copies the UUID from the Bridge panel and gives it to the AI.
  const session = (await avatar.locator('[data-session-id]').textContent())!.trim();
  const queued = await call(mcp, 'ogf_cue', {
    session_id: session,
    action: 'celebrate',
    emotion: 'proud',
    intensity: 0.9,
    gaze: 'user',
    ttl_ms: 8000,
    message: 'We shipped it!',
    wait_seconds: 0,
  });
  expect(queued.isError, textOf(queued)).toBeFalsy();
  const id = String(structured(queued).pending_id);
  const waiting = call(
    mcp,
    'await_command_result',
    { pending_id: id, wait_seconds: 60 },
    { timeout: 90_000 },
  );

  const c = card(owner, id);
  await c.waitFor();
  const shown = await c.innerText();
  expect(shown).toContain('ogf-bridge-client');
  expect(shown).toMatch(/sess·[0-9a-f]{6}/);
  expect(shown.toLowerCase()).not.toContain(session);
  await screenshot(owner, 'e2e-cue-1-owner-sees-request');
  await c.getByRole('button', { name: /^Approve/ }).click();

  await avatar
    .locator('[data-avatar][data-action="celebrate"][data-emotion="proud"][data-gaze="user"]')
    .waitFor();
  await expect.poll(() => avatar.locator('[data-message]').textContent()).toBe('We shipped it!');
  await avatar.waitForTimeout(300);
  await screenshot(avatar, 'e2e-cue-2-avatar-plays-cue');

  const r = await waiting;
  expect(structured(r)).toMatchObject({
    status: 'SUCCEEDED',
    pending_id: id,
    command: 'ogf.cue',
    delivery: { cue_id: id, applied_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
  });
  await owner.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
  expect((await owner.content()).toLowerCase()).not.toContain(session);
  await screenshot(owner, 'e2e-cue-3-owner-sees-success');
});
