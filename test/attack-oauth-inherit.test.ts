/**
 * Contract 15 (v4), attacked as a stranger who reaches the daemon's port would (issue 35 findings 5 and 7),
 * over the raw protocol: 100 unauthenticated /register calls must not use up the day's registrations
 * (the owner's real client still registers and connects); 100 /authorize calls must not push out the
 * consent the owner has opened; a DCR client calling itself "acme" after acme was disconnected is not
 * offered `acme`, and taking it by hand needs the owner's explicit "inherit" (the consent POST without it is
 * refused, not only the page); Disconnect ends the connection's grants unless the owner says otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, echoConfig, httpClient, structured, TestOwner } from './helpers/mcp.js';
import {
  authorizeUrl,
  connectByHand,
  decide,
  getAuthorize,
  pkce,
  postForm,
  startVendor,
  type Vendor,
} from './helpers/oauth.js';
import { OwnerSocket } from './helpers/owner.js';
import { type PanelLogin, panelLogin } from './helpers/panel.js';

let d: RunningDaemon;
let vendor: Vendor;
let login: PanelLogin;
let owner: TestOwner;
let grants: OwnerSocket;

beforeAll(async () => {
  vendor = await startVendor('Acme AI');
  d = await startDaemon({ config: echoConfig({ oauth: { enabled: true, allow_loopback_metadata: true } }) });
  login = await panelLogin(d);
  owner = await TestOwner.connect(d);
  grants = await OwnerSocket.open(d);
});

afterAll(async () => {
  owner?.close();
  await grants?.close();
  await d?.stop();
  await vendor?.close();
});

/** What a stranger (or the owner's real client) sends to /register: no credential of any kind. */
function register(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${d.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** /authorize for a client, as its browser would follow it; the consent location. */
async function authorizeFor(clientId: string, redirectUri: string, challenge = pkce().challenge) {
  const a = await getAuthorize(
    authorizeUrl(d, {
      client_id: clientId,
      redirect_uri: redirectUri,
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${d.url}/mcp`,
    }),
  );
  if (a.status !== 302 || a.location === null) throw new Error(`authorize: ${a.status} ${a.text}`);
  return a.location;
}

const ownerHeaders = () => ({ cookie: login.cookie, 'x-ogf-owner-key': login.key });

/** The consent card's content, as the owner's page reads it (which also marks it opened). */
async function openConsent(location: string): Promise<{ status: number; consent?: Record<string, unknown> }> {
  const id = /#request=(.+)$/.exec(location)![1]!;
  const r = await fetch(`${d.url}/owner/oauth/consent/${id}`, { headers: ownerHeaders() });
  const body = (await r.json()) as { consent?: Record<string, unknown> };
  return { status: r.status, ...(body.consent ? { consent: body.consent } : {}) };
}

/** What a client name would inherit, as the card asks while the owner types. */
async function nameCheck(name: string): Promise<Record<string, unknown>> {
  const r = await fetch(`${d.url}/owner/oauth/name?client_name=${encodeURIComponent(name)}`, {
    headers: ownerHeaders(),
  });
  return { status: r.status, ...((await r.json()) as Record<string, unknown>) };
}

function disconnect(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${d.url}/owner/oauth/disconnect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ownerHeaders(), origin: d.url },
    body: JSON.stringify(body),
  });
}

/** A connection `name` that ran one approved command and holds one live owner grant. */
async function connectWithHistory(name: string): Promise<string> {
  const c = await connectByHand(d, login, vendor, name);
  const client = await httpClient(`${d.url}/mcp`, c.access_token);
  const r = await client.callTool({
    name: 'run_command_wait',
    arguments: { command: 'echo', args: { word: 'secret' }, wait_seconds: 0 },
  });
  const id = structured(r as never).pending_id as string;
  await owner.approve(id);
  await client.close();
  const g = await grants.request({ type: 'grant', command: 'echo', client: name, ttl_s: 900 });
  expect(g, JSON.stringify(g)).toMatchObject({ ok: true });
  return (g.grant as { id: string }).id;
}

describe('[c15.flood] a stranger on the port cannot starve OAuth', () => {
  it('100 raw /register calls, then the owner’s real client still registers and connects', async () => {
    for (let i = 0; i < 100; i++)
      expect((await register({ redirect_uris: ['https://stranger.example/cb'] })).status).toBe(201);
    const mine = await register({ client_name: 'My Desktop AI', redirect_uris: [vendor.redirectUri] });
    expect(mine.status).toBe(201);
    const clientId = ((await mine.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkce();
    const location = await authorizeFor(clientId, vendor.redirectUri, challenge);
    const out = await decide(d, login, location, { decision: 'allow', client_name: 'desktop' });
    expect(out.status, out.error).toBe(200);
    const t = await postForm(`${d.url}/token`, {
      grant_type: 'authorization_code',
      code: new URL(out.redirect!).searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: vendor.redirectUri,
      client_id: clientId,
      resource: `${d.url}/mcp`,
    });
    expect(t.status).toBe(200);
  });

  it('100 raw /authorize calls do not push out the consent the owner has opened', async () => {
    const mine = await authorizeFor(vendor.clientId, vendor.redirectUri);
    expect((await openConsent(mine)).status).toBe(200);
    const first = await authorizeFor(vendor.clientId, vendor.redirectUri);
    for (let i = 0; i < 100; i++) await authorizeFor(vendor.clientId, vendor.redirectUri);
    // The oldest unopened one went first; the opened one still waits, and Allow works.
    expect((await openConsent(first)).status).toBe(404);
    const out = await decide(d, login, mine, { decision: 'allow', client_name: 'flooded' });
    expect(out.status, out.error).toBe(200);
    expect(new URL(out.redirect!).searchParams.get('code')).toBeTruthy();
  });
});

describe('[c15.inherit] a stranger does not inherit a disconnected client’s name', () => {
  it('a DCR client calling itself "acme" is offered acme-2; acme by hand needs the owner’s tick', async () => {
    await connectWithHistory('acme');
    // The owner disconnects acme but keeps its grant (unticked): the name now carries history and a grant.
    expect((await disconnect({ client_name: 'acme', end_grants: false })).status).toBe(200);

    const reg = await register({ client_name: 'acme', redirect_uris: ['https://stranger.example/cb'] });
    const stranger = ((await reg.json()) as { client_id: string }).client_id;
    const location = await authorizeFor(stranger, 'https://stranger.example/cb');
    const view = await openConsent(location);
    expect(view.consent?.suggested_name).toBe('acme-2');

    expect(await nameCheck('acme')).toMatchObject({
      status: 200,
      inherits: { commands: 1, grants: 1 },
    });
    expect(await nameCheck('acme-2')).toMatchObject({ status: 200 });
    expect((await nameCheck('acme-2')).inherits).toBeUndefined();

    // The page is not the only guard: the consent POST without the tick is refused, saying why.
    const blind = await decide(d, login, location, { decision: 'allow', client_name: 'acme' });
    expect(blind.status).toBe(400);
    expect(blind.error).toContain('acme has 1 command in the history and 1 live grant');
    const ticked = await decide(d, login, location, {
      decision: 'allow',
      client_name: 'acme',
      inherit: true,
    });
    expect(ticked.status, ticked.error).toBe(200);
  });

  it('names used before by a past connection, a token client or the history are never suggested', async () => {
    // `local` is the stdio client's name: a DCR client calling itself "local" is offered local-2.
    const reg = await register({ client_name: 'local', redirect_uris: ['https://stranger.example/cb'] });
    const id = ((await reg.json()) as { client_id: string }).client_id;
    const view = await openConsent(await authorizeFor(id, 'https://stranger.example/cb'));
    expect(view.consent?.suggested_name).toBe('local-2');
  });

  it('Disconnect ends the connection’s grants unless the owner unticks it', async () => {
    const grantId = await connectWithHistory('granted');
    expect((await disconnect({ client_name: 'granted' })).status).toBe(200);
    await waitFor(
      () => auditRows(d).some((a) => a.action === 'grant_revoked' && String(a.detail).includes(grantId)),
      'the grant to end with the connection',
    );
    expect(await nameCheck('granted')).toMatchObject({ inherits: { commands: 1, grants: 0 } });
  });
});
