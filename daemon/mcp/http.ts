/**
 * Streamable HTTP at `/mcp` and the capability URL `/mcp/<token>` (contract 3). The daemon's server has
 * already checked Host (403) before this route runs; here, in order: the MCP token (401, from
 * `Authorization: Bearer` or the path), then a browser Origin when one is sent (403), then the body size
 * (413), then the session, which must belong to the token's client (404 otherwise, like an unknown one).
 * A token is never logged: the capability route is logged as `/mcp/<token>`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest, type Server } from '@modelcontextprotocol/server';
import { type EdgeContext, type HttpRoute, TurnLimit, sendJson as writeJson } from '../http/index.js';
import { type Generation, generationOf, type ModernLeg, sdkRequest } from './generations.js';
import { parseJsonBody } from './json-body.js';
import { type McpSession, type SessionRegistry, sessionTag } from './sessions.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const CAPABILITY_RE = /^\/mcp\/([^/]+)$/;
// MCP requests handled in one event-loop turn at most (http/turns.ts), so the loop accepts between; asked once
// a request counts in its client's bound, so a refusal goes at once and one client waits for at most that.
const REQUESTS_PER_TURN = 8;

type Deps = Pick<EdgeContext, 'tokens' | 'origins' | 'log' | 'version' | 'oauthBearer'> & {
  /** Contract 1.3: browser Origins /mcp accepts besides the daemon's own and public_url's. */
  config: Pick<EdgeContext['config'], 'mcp_allowed_origins'>;
  sessions: SessionRegistry;
  /** A fresh SDK server acting for `client` in `generation` (./server.ts). */
  newServer: (client: string, generation: Generation) => Server;
  /** The 2026-07-28 leg (contract 10): per request, no session. */
  modern: ModernLeg;
  maxBodyBytes?: number;
  /** Hears each 2026-07-28 request's response while it is open (Disconnect ends them: contract 15). */
  trackModern?: (client: string, res: ServerResponse) => void;
};

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  writeJson(res, status, body, headers);
}

function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** Contract 3.2: one client's requests in flight are bounded (both generations together, sessions.ts). */
function refuseBusy(res: ServerResponse, cap: number): void {
  sendJson(
    res,
    503,
    rpcError(
      -32000,
      `Too many requests in flight for this client: at most ${cap} requests in flight at once (both MCP generations together); try again shortly.`,
    ),
    { 'retry-after': '5' },
  );
}

/** The bearer header's token ('' when malformed: a wrong token, never "none"), or undefined without one. */
function headerToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  return m?.[1] ?? '';
}

/**
 * Reads the body up to `max` bytes; undefined when it is larger (the caller answers 413). Past the limit the
 * rest is drained and dropped rather than buffered, so the 413 can still reach the client.
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.once('error', reject);
  });
}

/** The `/mcp` route for the daemon's HTTP server. */
export function createMcpHttpRoute(deps: Deps): HttpRoute {
  const route = new McpHttp(deps);
  return (req, res, url) => route.handle(req, res, url);
}

/** Which of the two paths a request came by, and the token its path carries. */
interface Path {
  /** How the route is logged: never the token. */
  route: '/mcp' | '/mcp/<token>';
  /** The capability URL's token ('' when it does not decode), or undefined on /mcp itself. */
  pathToken: string | undefined;
}

/**
 * The route's steps, in the order the file's opening comment gives: the path, the client (401), the Origin
 * (403), the method (405), the body (413, 400), then a 2026-07-28 request, a session's request, or a new
 * session.
 */
class McpHttp {
  readonly #deps: Deps;
  readonly #maxBody: number;
  readonly #listed: Set<string>;

  readonly #turns = new TurnLimit(REQUESTS_PER_TURN);
  constructor(deps: Deps) {
    this.#deps = deps;
    this.#maxBody = deps.maxBodyBytes ?? MAX_BODY_BYTES;
    this.#listed = new Set(deps.config.mcp_allowed_origins);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const path = pathOf(url);
    if (path === undefined) return false;
    const client = await this.#client(req, res, path);
    if (client === undefined || !this.#originAllowed(req, res, path, client)) return true;
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      sendJson(res, 405, rpcError(-32000, 'Method not allowed: use POST, GET or DELETE.'), {
        allow: 'POST, GET, DELETE',
      });
      return true;
    }
    const body = await this.#body(req, res);
    if (body === REFUSED) return true;
    // Contract 10: a 2026-07-28 request (the per-request envelope) is served per request, without a session.
    // GET and DELETE are session operations (2025); a POST is classified by the SDK's own classifier.
    if (req.method === 'POST' && generationOf(req, body) === 'modern') {
      await this.#serveModern(sdkRequest(req), res, body, client, path);
      return true;
    }
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') await this.#serveSession(sid, req, res, body, client, path);
    else if (req.method === 'POST' && isInitializeRequest(body))
      await this.#openSession(client, req, res, body);
    else
      sendJson(
        res,
        400,
        rpcError(-32000, 'Bad Request: send initialize first, then the Mcp-Session-Id it returns.'),
      );
    return true;
  }

  /**
   * Auth first (contract 3: missing or wrong token → 401). Every presented token must name the same client.
   * Contract 15: an OAuth access token counts only in the header of /mcp itself, never in a capability URL.
   */
  async #client(req: IncomingMessage, res: ServerResponse, path: Path): Promise<string | undefined> {
    const { tokens, oauthBearer, log } = this.#deps;
    const header = headerToken(req);
    const clients: Array<string | undefined> = [];
    if (header !== undefined) {
      let c = tokens.mcpClient(header);
      if (c === undefined && oauthBearer !== undefined && path.pathToken === undefined)
        c = await oauthBearer.clientFor(header);
      clients.push(c);
    }
    if (path.pathToken !== undefined) clients.push(tokens.mcpClient(path.pathToken));
    const client = clients[0];
    if (client !== undefined && clients.every((c) => c === client)) return client;
    log.log('info', 'mcp_unauthorized', {
      route: path.route,
      method: req.method,
      token_given: clients.length > 0,
    });
    sendJson(
      res,
      401,
      rpcError(
        -32001,
        'Unauthorized: send Authorization: Bearer <mcp token>, or use the capability URL /mcp/<token>.',
      ),
      // Contract 15: with OAuth on, the challenge names the protected resource metadata (RFC 9728).
      { 'www-authenticate': oauthBearer?.challenge(clients.length > 0) ?? 'Bearer realm="ogf-broker"' },
    );
    return undefined;
  }

  /** A browser's Origin, when one is sent: the daemon's own, public_url's, or one the config lists (403). */
  #originAllowed(req: IncomingMessage, res: ServerResponse, path: Path, client: string): boolean {
    const origin = req.headers.origin;
    if (origin === undefined || this.#deps.origins.isAllowedOrigin(origin) || this.#listedOrigin(origin))
      return true;
    this.#deps.log.log('info', 'mcp_origin_refused', {
      route: path.route,
      client,
      origin: origin.slice(0, 200),
    });
    sendJson(res, 403, rpcError(-32002, 'Forbidden: this Origin may not use the MCP endpoint.'));
    return false;
  }

  #listedOrigin(origin: string): boolean {
    try {
      return this.#listed.has(new URL(origin).origin);
    } catch {
      return false;
    }
  }

  /** A POST's JSON body (413 past the cap, 400 when not JSON: REFUSED, answered); nothing for GET and DELETE. */
  async #body(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    if (req.method !== 'POST') return undefined;
    const raw = await readBody(req, this.#maxBody);
    if (raw === undefined) {
      sendJson(res, 413, rpcError(-32000, `Request body too large: at most ${this.#maxBody} bytes.`), {
        connection: 'close',
      });
      return REFUSED;
    }
    try {
      return parseJsonBody(raw.toString('utf8'));
    } catch {
      sendJson(res, 400, rpcError(-32700, 'Parse error: the body must be JSON-RPC 2.0 in JSON.'));
      return REFUSED;
    }
  }

  /** A 2026-07-28 request (contract 10): no session to count it on, so the client's own count bounds it. */
  async #serveModern(
    probe: NonNullable<ReturnType<typeof sdkRequest>>,
    res: ServerResponse,
    body: unknown,
    client: string,
    path: Path,
  ): Promise<void> {
    const { sessions, log } = this.#deps;
    const end = sessions.beginRequest(client);
    if (end === undefined) {
      refuseBusy(res, sessions.maxBusyPerClient);
      return;
    }
    res.once('close', end);
    await this.#turns.turn();
    this.#deps.trackModern?.(client, res);
    try {
      await this.#deps.modern.serve(probe, res, body, client);
    } catch (e) {
      log.log('warn', 'mcp_request_failed', {
        route: path.route,
        generation: 'modern',
        error: (e as Error).message,
      });
      sendJson(res, 500, rpcError(-32603, 'Internal error.'));
    }
  }

  /** A request of a 2025 session, which must be this client's (another client's is answered as unknown). */
  async #serveSession(
    sid: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    client: string,
    path: Path,
  ): Promise<void> {
    const { sessions, log } = this.#deps;
    const session = sessions.get(sid);
    if (session === undefined || session.client !== client) {
      sendJson(res, 404, rpcError(-32001, 'Session not found: initialize a new MCP session.'));
      return;
    }
    // A POST is busy until its response closes (a tool call may wait 90 s on its SSE stream). A GET
    // stream only carries server-initiated notifications (today only tools/list_changed), so it does not
    // keep an idle session alive: evicting it just makes the client initialize again.
    if (req.method === 'GET') sessions.touch(session);
    else {
      // One client's waiting calls may not take every connection /mcp has (the others' too).
      const end = sessions.begin(session);
      if (end === undefined) {
        refuseBusy(res, sessions.maxBusyPerClient);
        return;
      }
      res.once('close', end);
    }
    await this.#turns.turn();
    try {
      await session.transport.handleRequest(req, res, body);
    } catch (e) {
      log.log('warn', 'mcp_request_failed', {
        route: path.route,
        session: sessionTag(sid),
        error: (e as Error).message,
      });
      sendJson(res, 500, rpcError(-32603, 'Internal error.'));
    }
  }

  /**
   * Per client (contract 3.2): room comes from this client's own least recently used idle session, never
   * from another client's; when all of its sessions are busy, or the memory bound is reached without one
   * of its own to give up, it gets 503.
   */
  async #openSession(
    client: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> {
    const { sessions } = this.#deps;
    if (!(await sessions.reserve(client))) {
      sendJson(res, 503, rpcError(-32000, 'Too many active MCP sessions; try again shortly.'), {
        'retry-after': '5',
      });
      return;
    }
    await this.#turns.turn();
    const server = this.#deps.newServer(client, 'legacy');
    let session: McpSession | undefined;
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { id, client, server, transport, lastSeen: Date.now(), active: 0 };
        sessions.add(session);
      },
      onsessionclosed: (id) => sessions.forget(id),
    });
    transport.onclose = () => {
      if (session !== undefined) sessions.forget(session.id);
    };
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      if (session === undefined) {
        sessions.release(client);
        await server.close().catch(() => {});
      }
    }
  }
}

/** A body refused (413 or 400) and already answered. */
const REFUSED = Symbol('refused');

/** /mcp itself or the capability URL /mcp/<token>; undefined for any other path (not this route's). */
function pathOf(url: URL): Path | undefined {
  const capability = CAPABILITY_RE.exec(url.pathname);
  if (capability === null)
    return url.pathname === '/mcp' ? { route: '/mcp', pathToken: undefined } : undefined;
  try {
    return { route: '/mcp/<token>', pathToken: decodeURIComponent(capability[1]!) };
  } catch {
    return { route: '/mcp/<token>', pathToken: '' };
  }
}
