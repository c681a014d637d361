/**
 * Passkeys and passkey-signed approvals (contracts.md 13.3) in real Chromium against the real daemon, with
 * Chromium's virtual authenticator (DevTools protocol `WebAuthn` domain: ctap2, internal, resident keys, user
 * verification on) standing in for the owner's fingerprint. The panel is served at http://localhost:PORT
 * (WebAuthn refuses an IP address as relying party).
 *
 * The owner adds a passkey in the panel, signs in with it in a fresh browser context, and approves a
 * `require_passkey` command in one gesture (the catalog command then runs). Then the attacks, run as a
 * process holding `owner.token` and a panel key would run them: Bearer and token-session approvals, the
 * terminal, grants, enrolling its own authenticator, a forged assertion, an assertion of the owner's for
 * another command, replayed, for another version, or past its time (the daemon's challenge TTL is shortened
 * by OGF_BROKER_PASSKEY_CHALLENGE_TTL_MS for this file) — each refused with PasskeyRequired (or
 * NotGrantable), nothing approved. A second owner's passkey counts for quorum, and each kept assertion
 * verifies offline from the audit record. Screenshots at 1280 and 390 px go to /tmp/shots-26/.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyKeptInEntry } from '../daemon/passkeys/index.js';
import { Store } from '../daemon/store/sqlite/index.js';
import { card, launchBrowser, loginPage, printedLoginUrl } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import {
  addOwner,
  bearerSocket,
  type Frame,
  mcpClient,
  OwnerSocket,
  ownerCatalog,
  queue,
  readMarks,
} from './helpers/owner.js';
import { type PanelLogin, panelLogin, panelProtocols } from './helpers/panel.js';
import { SoftAuthenticator } from './helpers/soft-authenticator.js';

const SHOTS = '/tmp/shots-26';
const TTL_MS = 5000;

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let ctxA: BrowserContext;
let pageA: Page;
let authA: { cdp: CDPSession; id: string };
let markFile: string;
/** The attacker: owner `owner` over `Authorization: Bearer <owner.token>`. */
let bearer: OwnerSocket;
let local: string;

function config(): Record<string, unknown> {
  const base = ownerCatalog(markFile) as { commands: Record<string, Record<string, unknown>> };
  const mark = base.commands.mark!;
  return {
    commands: {
      mark,
      vault: { ...mark, description: 'Write to the vault (passkey)', require_passkey: true },
      launch: { ...mark, description: 'Launch (two owners, passkeys)', require_passkey: true, approvals: 2 },
    },
  };
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** A virtual authenticator on `page` (user verification on), optionally holding `credentials`. */
async function authenticator(
  page: Page,
  credentials: Frame[] = [],
): Promise<{ cdp: CDPSession; id: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  for (const c of credentials)
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: c as never });
  return { cdp, id: authenticatorId };
}

/** Sends a frame with a fresh req_id and waits for any frame answering it (reply or its own type). */
let nextReq = 1;
async function ask(s: OwnerSocket, frame: Frame): Promise<Frame> {
  const req_id = `t${nextReq++}`;
  s.ws.send(JSON.stringify({ ...frame, req_id }));
  return s.waitFor((f) => f.req_id === req_id, `answer to ${frame.type}`);
}

/** The owner's authenticator in `page` signs `options` (what an approve_challenge gave). */
function signIn(page: Page, options: Frame): Promise<Frame> {
  return page.evaluate(
    (o) =>
      (
        globalThis as unknown as {
          SimpleWebAuthnBrowser: { startAuthentication(a: { optionsJSON: unknown }): Promise<Frame> };
        }
      ).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: o }),
    options,
  );
}

/** The audit entries of a command, read from broker.db as `audit verify` will. */
function auditOf(id: string): Frame[] {
  const store = new Store(join(d.dataDir, 'broker.db'));
  try {
    return store.auditFor(id) as Frame[];
  } finally {
    store.close();
  }
}

/** A panel socket as a page at http://localhost:PORT opens it: cookie, panel key, that Origin. */
function localPanel(login: PanelLogin): Promise<OwnerSocket> {
  return OwnerSocket.open(d, { Cookie: login.cookie, Origin: local }, panelProtocols(login.key));
}

/** The attacker's panel socket: a token login (owner.token) and its panel key, at localhost. */
let attacker: OwnerSocket;

function state(id: string): Promise<string> {
  return bearer.view(id, () => true, id).then((v) => v.state as string);
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-browser-passkeys-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({
    dataDir,
    config: config(),
    env: { OGF_BROKER_PASSKEY_CHALLENGE_TTL_MS: String(TTL_MS) },
  });
  local = d.url.replace('127.0.0.1', 'localhost');
  ai = await mcpClient(d);
  bearer = await bearerSocket(d, d.ownerToken);
  attacker = await localPanel(await panelLogin(d));
  browser = await launchBrowser();
  ctxA = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  pageA = await ctxA.newPage();
  authA = await authenticator(pageA);
});

afterAll(async () => {
  await browser?.close();
  await bearer?.close();
  await attacker?.close();
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('passkeys for owners (contract 13.3)', () => {
  it('start prints the http://localhost:PORT panel beside the 127.0.0.1 login URL, and who has no passkey yet', async () => {
    await printedLoginUrl(d);
    expect(d.stdout()).toContain(`Passkeys: use the panel at ${local}/`);
    expect(d.stdout()).toContain('require_passkey is on and owner has no passkey yet: add one there now');
    // The login URL stays the banner's last line.
    expect(d.stdout().trimEnd().split('\n').at(-1)).toMatch(/\/login#token=\S+$/);
  });

  it('a token session adds the first passkey in the panel (discoverable, user verified)', async () => {
    const url = (await printedLoginUrl(d)).replace('127.0.0.1', 'localhost');
    await pageA.goto(url);
    await pageA.waitForURL(`${local}/`);
    await pageA.locator('#connection[data-state="live"]').waitFor();
    await pageA.locator('#passkeys-status', { hasText: 'No passkey yet' }).waitFor();
    await pageA.getByRole('button', { name: 'Add a passkey' }).click();
    await pageA.locator('#passkeys-status', { hasText: 'Passkey added. 1 passkey' }).waitFor();
    expect(await pageA.locator('.passkey').count()).toBe(1);
    const listed = await ask(bearer, { type: 'passkey_list' });
    expect(listed.passkeys).toHaveLength(1);
    expect(listed.passkeys[0]).toMatchObject({ rp_id: 'localhost' });
    const { credentials } = await authA.cdp.send('WebAuthn.getCredentials', { authenticatorId: authA.id });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect(credentials[0]!.credentialId.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')).toBe(
      listed.passkeys[0].credential_id,
    );
    await pageA.locator('#passkeys').scrollIntoViewIfNeeded();
    await shot(pageA, 'passkeys-01-added-1280');
    await pageA.setViewportSize({ width: 390, height: 844 });
    await shot(pageA, 'passkeys-02-added-390');
    await pageA.setViewportSize({ width: 1280, height: 900 });
  });

  it('signs in with the passkey in a fresh browser context: the same session as the token login', async () => {
    const { credentials } = await authA.cdp.send('WebAuthn.getCredentials', { authenticatorId: authA.id });
    const ctxB = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const pageB = await ctxB.newPage();
      await pageB.goto(`${local}/login`);
      await shot(pageB, 'passkeys-03-login-390');
      const authB = await authenticator(pageB, credentials as Frame[]);
      await pageB.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await pageB.waitForURL(`${local}/`);
      await pageB.locator('#connection[data-state="live"]').waitFor();
      // The name comes with the daemon's `hello` frame, after the socket already shows live: wait for it,
      // not read it once (a full run on a slower machine read it empty).
      await pageB.locator('#signed-in', { hasText: 'Signed in as owner' }).waitFor();
      const cookies = await ctxB.cookies();
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      // Signed in with a passkey: this session may add and remove passkeys (no "token login cannot").
      await pageB.locator('#passkeys-status', { hasText: /^1 passkey\.$/ }).waitFor();
      await shot(pageB, 'passkeys-04-signed-in-390');
      // The same passkey on one device: its signature counter moved on in B, so A takes B's state back
      // (the daemon refuses a counter that goes backwards: a cloned authenticator).
      const after = await authB.cdp.send('WebAuthn.getCredentials', { authenticatorId: authB.id });
      await authA.cdp.send('WebAuthn.clearCredentials', { authenticatorId: authA.id });
      for (const c of after.credentials)
        await authA.cdp.send('WebAuthn.addCredential', { authenticatorId: authA.id, credential: c });
    } finally {
      await ctxB.close();
    }
  });

  it('at http://127.0.0.1:PORT the panel says where passkeys work instead of failing silently', async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await ctx.newPage();
      await authenticator(page);
      await loginPage(page, d);
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.locator('#passkeys-status', { hasText: `passkeys need the panel at ${local}` }).waitFor();
      await page.locator('#passkeys').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, 'passkeys-08-ip-address-390.png') });
    } finally {
      await ctx.close();
    }
  });

  it('a passkey sign-in answered by an unknown authenticator is refused (401), no session', async () => {
    const o = await fetch(`${local}/login/passkey/options`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: local },
      body: '{}',
    });
    const { options } = (await o.json()) as Frame;
    const forged = new SoftAuthenticator('localhost', local).assert(options.challenge);
    const r = await fetch(`${local}/login/passkey`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: local },
      body: JSON.stringify({ response: forged }),
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('set-cookie')).toBeNull();
  });
});

describe('passkey-signed approvals (contract 13.3)', () => {
  it('[c13.3.approve] [c13.3.kept] approves a require_passkey command in one gesture; the command runs; the assertion is kept and verifies offline', async () => {
    const id = await queue(ai, 'vault', { word: 'alpha' });
    const c = card(pageA, id);
    await c.waitFor();
    await expect(c.getByRole('button', { name: /^Allow/ }).count()).resolves.toBe(0);
    await shot(pageA, 'passkeys-05-card-1280');
    await pageA.setViewportSize({ width: 390, height: 844 });
    await c.scrollIntoViewIfNeeded();
    await pageA.screenshot({ path: join(SHOTS, 'passkeys-05-card-390.png') });
    await pageA.setViewportSize({ width: 1280, height: 900 });
    const approve = c.getByRole('button', { name: 'Approve with passkey' });
    await expect(approve).toBeDefined();
    await waitFor(async () => !(await approve.isDisabled()), 'Approve enabled');
    await approve.click();
    const done = await bearer.view(id, (v) => v.state === 'succeeded', 'vault ran');
    expect(done.decided_by).toBe('owner');
    expect(done.passkey_required).toBe(true);
    expect(readMarks(markFile)).toContain('alpha');
    await shot(pageA, 'passkeys-06-approved-1280');
    const approval = auditOf(id).find((e) => e.action === 'approve')!;
    expect(approval.detail.passkey.challenge_input.canonical).toContain(`"id":"${id}"`);
    expect(await verifyKeptInEntry(approval, { word: 'alpha' })).toEqual({ ok: true });
    // One altered byte of the kept signature is found.
    const altered = structuredClone(approval);
    const sig = Buffer.from(altered.detail.passkey.response.response.signature, 'base64url');
    sig[sig.length - 3] = sig[sig.length - 3]! ^ 1;
    altered.detail.passkey.response.response.signature = sig.toString('base64url');
    expect((await verifyKeptInEntry(altered)).ok).toBe(false);
    expect((await verifyKeptInEntry(approval, { word: 'beta' })).ok).toBe(false);
    // `audit verify` checks it from broker.db, daemon running (contract 14: "every passkey assertion").
    const verified = await runCli(['audit', 'verify', '--data-dir', d.dataDir]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^ok: \d+ entries, \d+ checkpoints, 1 passkey approvals verified$/m);
  });

  it('[c13.3.approve] [c13.3.enrol] [attack] what holds owner.token cannot approve it: Bearer, a token session with its panel key, the terminal', async () => {
    const id = await queue(ai, 'vault', { word: 'bravo' });
    await bearer.view(id, (v) => v.state === 'awaiting_review', 'waiting');
    const viaBearer = await ask(bearer, { type: 'approve', id, version: 1 });
    expect(viaBearer).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
    const panel = attacker;
    {
      const viaPanel = await ask(panel, { type: 'approve', id, version: 1 });
      expect(viaPanel).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
      // Enrolling its own authenticator: refused while the owner has a passkey.
      expect(await ask(panel, { type: 'passkey_begin' })).toMatchObject({
        ok: false,
        error: { code: 'PasskeyRequired' },
      });
      const soft = new SoftAuthenticator('localhost', local);
      expect(await ask(panel, { type: 'passkey_finish', response: soft.assert('x') })).toMatchObject({
        ok: false,
        error: { code: 'PasskeyRequired' },
      });
      const mine = (await ask(panel, { type: 'passkey_list' })).passkeys as Frame[];
      expect(
        await ask(panel, { type: 'passkey_remove', credential_id: mine[0]!.credential_id }),
      ).toMatchObject({
        ok: false,
        error: { code: 'PasskeyRequired' },
      });
      // A real challenge, signed by a key the daemon does not know.
      const ch = await ask(panel, { type: 'approve_challenge', id, version: 1 });
      expect(ch.type).toBe('approve_challenge');
      const forged = await ask(panel, {
        type: 'approve',
        id,
        version: 1,
        assertion: soft.assert(ch.challenge),
      });
      expect(forged).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
      // ... or by the owner's own credential id with a forged signature.
      const ch2 = await ask(panel, { type: 'approve_challenge', id, version: 1 });
      const fake = {
        ...soft.assert(ch2.challenge),
        id: mine[0]!.credential_id,
        rawId: mine[0]!.credential_id,
      };
      expect(await ask(panel, { type: 'approve', id, version: 1, assertion: fake })).toMatchObject({
        ok: false,
        error: { code: 'PasskeyRequired' },
      });
    }
    const cli = await runCli(['approve', id, '--data-dir', d.dataDir]);
    expect(cli.code).not.toBe(0);
    expect(cli.stdout + cli.stderr).toContain('PasskeyRequired');
    expect(await state(id)).toBe('awaiting_review');
    expect(readMarks(markFile)).not.toContain('bravo');
  });

  it('[c13.3.approve] [attack] grants for it: NotGrantable, whether made alone or with an approval', async () => {
    const id = await queue(ai, 'vault', { word: 'charlie' });
    await bearer.view(id, (v) => v.state === 'awaiting_review', 'waiting');
    expect(await ask(bearer, { type: 'grant', command: 'vault', client: '*', ttl_s: 600 })).toMatchObject({
      ok: false,
      error: { code: 'NotGrantable' },
    });
    expect(
      await ask(bearer, { type: 'approve', id, version: 1, grant: { same_args: true, ttl_s: 600 } }),
    ).toMatchObject({ ok: false, error: { code: 'NotGrantable' } });
    const cli = await runCli([
      'grant',
      'add',
      '--command',
      'vault',
      '--client',
      '*',
      '--ttl-s',
      '600',
      '--data-dir',
      d.dataDir,
    ]);
    expect(cli.code).not.toBe(0);
    expect(await state(id)).toBe('awaiting_review');
  });

  it('[c13.3.challenge] [attack] an assertion of the owner for another command, then replayed after that use: PasskeyRequired', async () => {
    const x = await queue(ai, 'vault', { word: 'delta' });
    const y = await queue(ai, 'vault', { word: 'echo' });
    await bearer.view(y, (v) => v.state === 'awaiting_review', 'waiting');
    // The attacker asks for a challenge over x and gets the owner's device to sign it (say, by a prompt
    // the owner believed was for x); it then tries to spend that signature on y, and again on x.
    const ch = await ask(attacker, { type: 'approve_challenge', id: x, version: 1 });
    const signed = await signIn(pageA, ch.options);
    const onY = await ask(bearer, { type: 'approve', id: y, version: 1, assertion: signed });
    expect(onY).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
    expect(onY.error.message).toContain(`not of ${y}`);
    const replay = await ask(bearer, { type: 'approve', id: x, version: 1, assertion: signed });
    expect(replayed(replay)).toBe(true);
    expect(await state(x)).toBe('awaiting_review');
    expect(await state(y)).toBe('awaiting_review');
  });

  it('[c13.3.challenge] [attack] an assertion replayed after it approved (kept in the audit record): PasskeyRequired', async () => {
    const x = await queue(ai, 'vault', { word: 'foxtrot' });
    await bearer.view(x, (v) => v.state === 'awaiting_review', 'waiting');
    const ch = await ask(attacker, { type: 'approve_challenge', id: x, version: 1 });
    const signed = await signIn(pageA, ch.options);
    expect(await ask(bearer, { type: 'approve', id: x, version: 1, assertion: signed })).toMatchObject({
      ok: true,
    });
    await bearer.view(x, (v) => v.state === 'succeeded', 'x ran');
    const y = await queue(ai, 'vault', { word: 'foxtrot' });
    await bearer.view(y, (v) => v.state === 'awaiting_review', 'waiting');
    const kept = auditOf(x).find((e) => e.action === 'approve')!.detail.passkey.response;
    const again = await ask(bearer, { type: 'approve', id: y, version: 1, assertion: kept });
    expect(again).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
    expect(await state(y)).toBe('awaiting_review');
  });

  it('[c13.3.challenge] [attack] an assertion used after its 120 s (shortened here by the TTL knob): PasskeyRequired', async () => {
    const x = await queue(ai, 'vault', { word: 'golf' });
    await bearer.view(x, (v) => v.state === 'awaiting_review', 'waiting');
    const ch = await ask(attacker, { type: 'approve_challenge', id: x, version: 1 });
    const signed = await signIn(pageA, ch.options);
    await new Promise((r) => setTimeout(r, TTL_MS + 500));
    const late = await ask(bearer, { type: 'approve', id: x, version: 1, assertion: signed });
    expect(late).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
    expect(late.error.message).toContain('older than');
    expect(await state(x)).toBe('awaiting_review');
  });

  it('[c13.3.approve] [c13.3.challenge] quorum: each of two owners signs with their own passkey; an assertion for the earlier version is refused', async () => {
    const bob = await addOwner(d, 'bob');
    const ctxBob = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const pageBob = await ctxBob.newPage();
      await authenticator(pageBob);
      await pageBob.goto(bob.url.replace('127.0.0.1', 'localhost'));
      await pageBob.waitForURL(`${local}/`);
      await pageBob.locator('#connection[data-state="live"]').waitFor();
      await pageBob.getByRole('button', { name: 'Add a passkey' }).click();
      await pageBob.locator('#passkeys-status', { hasText: 'Passkey added' }).waitFor();

      const id = await queue(ai, 'launch', { word: 'hotel' });
      await bearer.view(id, (v) => v.state === 'awaiting_review', 'waiting');
      // The owner's device signs version 1; bob approves first (version 2), so that signature is stale.
      const ch = await ask(attacker, { type: 'approve_challenge', id, version: 1 });
      const stale = await signIn(pageA, ch.options);
      const onBob = card(pageBob, id).getByRole('button', { name: 'Approve with passkey' });
      await waitFor(async () => !(await onBob.isDisabled()), 'bob can approve');
      await onBob.click();
      await bearer.view(id, (v) => (v.approvals ?? []).length === 1, 'bob approved');
      const old = await ask(bearer, { type: 'approve', id, version: 2, assertion: stale });
      expect(old).toMatchObject({ ok: false, error: { code: 'PasskeyRequired' } });
      expect(await state(id)).toBe('awaiting_review');
      const onOwner = card(pageA, id).getByRole('button', { name: 'Approve with passkey' });
      await waitFor(async () => !(await onOwner.isDisabled()), 'owner can approve');
      await onOwner.click();
      const done = await bearer.view(id, (v) => v.state === 'succeeded', 'launch ran');
      expect(done.approvals.map((a: Frame) => a.by).sort()).toEqual(['bob', 'owner']);
      const kept = auditOf(id).filter((e) => e.action === 'approve');
      expect(kept).toHaveLength(2);
      for (const e of kept) expect(await verifyKeptInEntry(e, { word: 'hotel' })).toEqual({ ok: true });
      await shot(pageA, 'passkeys-07-quorum-1280');
    } finally {
      await ctxBob.close();
    }
  });

  it('[c13.3.enrol] recovery: token owner --rotate removes the passkeys and approves nothing by itself', async () => {
    const id = await queue(ai, 'vault', { word: 'india' });
    await bearer.view(id, (v) => v.state === 'awaiting_review', 'waiting');
    const r = await runCli(['token', 'owner', '--rotate', '--data-dir', d.dataDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('passkeys are removed');
    const token = /#token=(\S+)$/.exec(r.stdout.trimEnd())![1]!;
    const fresh = await bearerSocket(d, token);
    try {
      expect((await ask(fresh, { type: 'passkey_list' })).passkeys).toEqual([]);
      expect(await ask(fresh, { type: 'approve', id, version: 1 })).toMatchObject({
        ok: false,
        error: { code: 'PasskeyRequired' },
      });
    } finally {
      await fresh.close();
    }
    expect(await state(id)).toBe('awaiting_review');
  });
});

/** A replayed assertion's refusal: PasskeyRequired, its challenge unknown or already used. */
function replayed(f: Frame): boolean {
  return f.ok === false && f.error.code === 'PasskeyRequired' && /already used/.test(f.error.message);
}
