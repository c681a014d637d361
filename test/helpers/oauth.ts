/**
 * Contract 15 test helpers: a remote AI vendor played over loopback (its Client ID Metadata Document and its
 * redirect receiver, real HTTP), PKCE, an OAuthClientProvider as an MCP client application implements it
 * for the SDKs' own OAuth flows, and the owner's consent given through the panel's own HTTP routes (the
 * browser suites click the page instead).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningDaemon } from './daemon.js';
import type { PanelLogin } from './panel.js';

/** The AI vendor: serves `/client.json` (its CIMD) and receives `/callback?code…` redirects. */
export interface Vendor {
  base: string;
  clientId: string;
  redirectUri: string;
  /** Every callback's query, in arrival order. */
  callbacks: URLSearchParams[];
  /** What /client.json serves (tests change it). */
  document: Record<string, unknown>;
  close(): Promise<void>;
}

export async function startVendor(name = 'Vendor AI'): Promise<Vendor> {
  const callbacks: URLSearchParams[] = [];
  const v = { callbacks } as unknown as Vendor;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', v.base);
    if (url.pathname === '/client.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v.document));
      return;
    }
    if (url.pathname === '/callback') {
      callbacks.push(url.searchParams);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>done</title><p id="done">You can close this tab.</p>');
      return;
    }
    if (url.pathname === '/frame') {
      // Another origin trying to frame the consent page (clickjacking).
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><iframe id="f" src="${url.searchParams.get('src')}" width="800" height="600"></iframe>`,
      );
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  v.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  v.clientId = `${v.base}/client.json`;
  v.redirectUri = `${v.base}/callback`;
  v.document = {
    client_id: v.clientId,
    client_name: name,
    redirect_uris: [v.redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  v.close = () => new Promise<void>((r) => server.close(() => r()));
  return v;
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface AuthorizeParams {
  client_id: string;
  redirect_uri: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
  response_type?: string;
}

/** The /authorize URL with these parameters (omitted ones are left out). */
export function authorizeUrl(d: RunningDaemon, p: AuthorizeParams): string {
  const q = new URLSearchParams();
  q.set('response_type', p.response_type ?? 'code');
  for (const [k, v] of Object.entries(p)) if (v !== undefined && k !== 'response_type') q.set(k, v);
  return `${d.url}/authorize?${q}`;
}

/** GET /authorize without following: the status and Location. */
export async function getAuthorize(
  url: string,
): Promise<{ status: number; location: string | null; text: string }> {
  const r = await fetch(url, { redirect: 'manual' });
  return { status: r.status, location: r.headers.get('location'), text: await r.text() };
}

/** The owner's decision through the consent page's own route; resolves the redirect it answers. */
export async function decide(
  d: RunningDaemon,
  login: PanelLogin,
  location: string,
  body: Record<string, unknown>,
): Promise<{ status: number; redirect?: string; error?: string }> {
  const id = /#request=([A-Za-z0-9_-]+)$/.exec(location)?.[1];
  if (id === undefined) throw new Error(`not a consent location: ${location}`);
  const r = await fetch(`${d.url}/owner/oauth/consent/${id}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: login.cookie,
      'x-ogf-owner-key': login.key,
      origin: d.url,
    },
    body: JSON.stringify(body),
  });
  const j = (await r.json()) as { redirect?: string; error?: { message: string } };
  return {
    status: r.status,
    ...(j.redirect ? { redirect: j.redirect } : {}),
    ...(j.error ? { error: j.error.message } : {}),
  };
}

/** POST a form to /token or /revoke. */
export async function postForm(
  url: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

export interface Connected {
  access_token: string;
  refresh_token: string;
  code: string;
}

/**
 * A whole connection by hand (the raw protocol, as the attack suites drive it): /authorize, the owner's
 * Allow with `name` through the consent route, /token.
 */
export async function connectByHand(
  d: RunningDaemon,
  login: PanelLogin,
  vendor: Vendor,
  name: string,
): Promise<Connected> {
  const { verifier, challenge } = pkce();
  const a = await getAuthorize(
    authorizeUrl(d, {
      client_id: vendor.clientId,
      redirect_uri: vendor.redirectUri,
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${d.url}/mcp`,
    }),
  );
  if (a.status !== 302 || a.location === null) throw new Error(`authorize: ${a.status} ${a.text}`);
  const out = await decide(d, login, a.location, { decision: 'allow', client_name: name });
  if (out.redirect === undefined) throw new Error(`consent: ${out.status} ${out.error}`);
  const code = new URL(out.redirect).searchParams.get('code')!;
  const t = await postForm(`${d.url}/token`, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: vendor.redirectUri,
    client_id: vendor.clientId,
    resource: `${d.url}/mcp`,
  });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${JSON.stringify(t.body)}`);
  return { access_token: t.body.access_token as string, refresh_token: t.body.refresh_token as string, code };
}

/**
 * An OAuthClientProvider the way an MCP client application writes one (both SDKs take this shape): it
 * keeps what the SDK asks it to keep and, instead of opening a browser itself, records the authorization
 * URL for the test's Chromium to open.
 */
export class RecordingProvider {
  authorizationUrl: URL | undefined;
  lastState: string | undefined;
  #verifier = '';
  #tokens: Record<string, unknown> | undefined;
  #info: Record<string, unknown> | undefined;
  readonly #redirect: string;
  readonly #name: string;

  /** `clientId`: a CIMD URL the client presents as its client_id; absent: the SDK registers (DCR). */
  constructor(redirect: string, name: string, clientId?: string) {
    this.#redirect = redirect;
    this.#name = name;
    if (clientId !== undefined) this.#info = { client_id: clientId };
  }
  get redirectUrl(): string {
    return this.#redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.#name,
      redirect_uris: [this.#redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    this.lastState = randomBytes(12).toString('base64url');
    return this.lastState;
  }
  clientInformation() {
    return this.#info as never;
  }
  saveClientInformation(info: unknown): void {
    this.#info = info as Record<string, unknown>;
  }
  tokens() {
    return this.#tokens as never;
  }
  saveTokens(tokens: unknown): void {
    this.#tokens = tokens as Record<string, unknown>;
  }
  get savedTokens(): { access_token: string; refresh_token: string } | undefined {
    return this.#tokens as never;
  }
  get savedClientId(): string | undefined {
    return this.#info?.client_id as string | undefined;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  #discovery: unknown;
  saveDiscoveryState(state: unknown): void {
    this.#discovery = state;
  }
  discoveryState(): never {
    return this.#discovery as never;
  }
  saveCodeVerifier(v: string): void {
    this.#verifier = v;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
}
