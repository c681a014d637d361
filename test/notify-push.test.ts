/**
 * Web Push through the real daemon (contracts.md 13.2). The test plays both the browser (its P-256 keys and
 * auth secret, decrypting what arrives, test/helpers/push-service.ts) and the push service (an HTTP server on
 * loopback that verifies the VAPID JWT's signature): every waiting command is pushed with RFC 8291 encryption
 * and RFC 8292 VAPID, its payload follows the redaction rules, 404/410 removes a subscription, and
 * subscriptions and the VAPID key survive a restart.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';
import { Device, PushService } from './helpers/push-service.js';

let dataDir: string;
let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let svc: PushService;
const phone = new Device();
const old = new Device();
let publicKey: string;

function start(): Promise<RunningDaemon> {
  return startDaemon({ dataDir, config: ownerCatalog(join(dataDir, 'marks')) });
}

async function devices(o: OwnerSocket = owner): Promise<string[]> {
  const r = await o.request({ type: 'push_list' });
  expect(r.type).toBe('push_devices');
  return (r.devices as Frame[]).map((x) => String(x.endpoint));
}

beforeAll(async () => {
  svc = await PushService.start();
  phone.endpoint = `${svc.origin}/push/phone-7f3a`;
  old.endpoint = `${svc.origin}/push/forgotten-19c2`;
  svc.answers.set('/push/forgotten-19c2', 410);
  dataDir = makeDataDir();
  d = await start();
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d, {
    Authorization: `Bearer ${d.ownerToken}`,
    'User-Agent': 'TestPhone/1.0',
  });
  const r = await fetch(`${d.url}/owner/push-key`);
  expect(r.status).toBe(200);
  publicKey = ((await r.json()) as { public_key: string }).public_key;
});

afterAll(async () => {
  await ai?.close();
  await owner?.close();
  await d?.stop();
  await svc?.close();
});

describe('[c13.2.web-push] Web Push', () => {
  it('creates the VAPID key pair at first start in vapid.json, 0600', () => {
    const st = statSync(join(dataDir, 'vapid.json'));
    expect(st.mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(join(dataDir, 'vapid.json'), 'utf8')) as { publicKey: string };
    expect(saved.publicKey).toBe(publicKey);
    expect(Buffer.from(publicKey, 'base64url')).toHaveLength(65);
  });

  it('refuses an endpoint that is neither https nor http on loopback, naming the field', async () => {
    const bad = new Device();
    bad.endpoint = 'http://push.example.com/x';
    const r = await owner.request({ type: 'push_subscribe', subscription: bad.json() });
    expect(r).toMatchObject({ ok: false, error: { code: 'BadMessage' } });
    expect(r.error.message).toContain('subscription.endpoint must be an https:// URL');
    const short = { ...phone.json(), keys: { p256dh: 'AAAA', auth: phone.json().keys.auth } };
    const r2 = await owner.request({ type: 'push_subscribe', subscription: short });
    expect(r2.error.message).toContain('subscription.keys.p256dh must be base64url of 65 bytes');
  });

  it('[c13.1.secrets] pushes each waiting command, encrypted and VAPID-signed, without its arguments', async () => {
    for (const dev of [phone, old])
      expect(await owner.request({ type: 'push_subscribe', subscription: dev.json() })).toMatchObject({
        ok: true,
      });
    expect(await devices()).toEqual([phone.endpoint, old.endpoint]);
    const listed = (await owner.request({ type: 'push_list' })).devices as Frame[];
    expect(listed[0]).toMatchObject({ user_agent: 'TestPhone/1.0', created_at: expect.any(String) });

    const id = await queue(ai, 'mark', { word: 'hiddenargument' }, 'the hiddenargument reason');
    const got = await waitFor(
      () => svc.pushed.find((p) => p.path === '/push/phone-7f3a'),
      'the push to the phone',
    );
    expect(svc.refused).toEqual([]);
    expect(got.vapidKey).toBe(publicKey);
    expect(got.claims.aud).toBe(svc.origin);
    expect(String(got.claims.sub)).toMatch(/^mailto:/);
    expect(Number(got.claims.exp)).toBeGreaterThan(Date.now() / 1000);
    expect(Number(got.claims.exp)).toBeLessThanOrEqual(Date.now() / 1000 + 24 * 3600);
    expect(got.headers['content-encoding']).toBe('aes128gcm');
    expect(Number(got.headers.ttl)).toBeGreaterThan(0);
    const payload = JSON.parse(phone.decrypt(got.body)) as Record<string, unknown>;
    expect(payload).toEqual({ title: 'local asks: mark', body: 'Run mark', url: `/#${id}`, tag: id });
    // Nothing of the arguments, the justification or a token in any byte, decrypted or not.
    const bytes = `${JSON.stringify(got.headers)}${got.body.toString('latin1')}${JSON.stringify(payload)}`;
    for (const s of ['hiddenargument', d.ownerToken, d.mcpToken]) expect(bytes).not.toContain(s);
  });

  it('a push service answering 410 removes that subscription', async () => {
    await waitFor(
      () => svc.pushed.some((p) => p.path === '/push/forgotten-19c2'),
      'the push to the forgotten device',
    );
    await waitFor(async () => (await devices()).length === 1, 'the forgotten device removed');
    expect(await devices()).toEqual([phone.endpoint]);
  });

  it('subscriptions and the VAPID key survive a restart; unsubscribe removes one, twice is NotFound', async () => {
    await owner.close();
    await d.stop();
    d = await start();
    owner = await OwnerSocket.open(d);
    const r = await fetch(`${d.url}/owner/push-key`);
    expect(((await r.json()) as { public_key: string }).public_key).toBe(publicKey);
    expect(await devices()).toEqual([phone.endpoint]);
    expect(await owner.request({ type: 'push_unsubscribe', endpoint: phone.endpoint })).toMatchObject({
      ok: true,
    });
    expect(await devices()).toEqual([]);
    expect(await owner.request({ type: 'push_unsubscribe', endpoint: phone.endpoint })).toMatchObject({
      ok: false,
      error: { code: 'NotFound' },
    });
    // The next waiting command reaches a device still subscribed, and not the removed one.
    const laptop = new Device();
    laptop.endpoint = `${svc.origin}/push/laptop-51d0`;
    expect(await owner.request({ type: 'push_subscribe', subscription: laptop.json() })).toMatchObject({
      ok: true,
    });
    const before = svc.pushed.filter((p) => p.path === '/push/phone-7f3a').length;
    await ai.close();
    ai = await mcpClient(d);
    const id = await queue(ai, 'mark', { word: 'after' });
    const got = await waitFor(
      () => svc.pushed.find((p) => p.path === '/push/laptop-51d0'),
      'the push to the laptop',
    );
    expect(JSON.parse(laptop.decrypt(got.body))).toMatchObject({ tag: id });
    expect(svc.pushed.filter((p) => p.path === '/push/phone-7f3a').length).toBe(before);
  });
});
