/**
 * Both MCP protocol generations on one URL (contract 10). The SDK's own classifier decides (isLegacyRequest:
 * "runs exactly the code createMcpHandler runs to make the routing decision"): a request carrying the
 * 2026-07-28 per-request `_meta` envelope claim is modern and is served per request by `createMcpHandler`
 * (strict, `legacy: 'reject'`); everything else — `initialize`, `Mcp-Session-Id` traffic, GET streams,
 * DELETE — is 2025-era and keeps the stateful sessions of ./http.ts. Our own checks (Host, token, Origin,
 * body size, JSON) run before either leg, so both see the same gate.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  isJSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  type Server,
} from '@modelcontextprotocol/server';
import type { Logger } from '../base/index.js';
import type { ToolSet } from './toolset.js';

/** `legacy` = 2024-11-05 … 2025-11-25 (initialize, sessions); `modern` = 2026-07-28 (server/discover, envelope). */
export type Generation = 'legacy' | 'modern';

/**
 * The headers the SDK reads from a POST: its classifier (and the modern leg's own standard-header check)
 * the MCP ones, its 415 check the content type. Nothing else is handed on — not the Authorization header:
 * the token never travels further than the check that already passed.
 */
const SDK_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'content-type'];
/** A fixed URL: a capability URL's path is the token itself (contract 3), and the SDK needs no URL of ours. */
const SDK_URL = 'http://mcp.invalid/mcp';

/**
 * One modern POST as the SDK's handler sees it: a web `Request` with the headers above and no body (we
 * already parsed it and hand the SDK that value, so createMcpHandler reads nothing from the request). No abort signal: most POSTs are 2025-era and never need one (undici's signal following costs
 * more than the rest of the request); the modern leg adds its own.
 */
export function sdkRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const name of SDK_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  return new Request(SDK_URL, { method: 'POST', headers });
}

/** A request header's one value, as the SDK's classifier reads it (`Headers.get`: absent is undefined). */
function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * Which generation a POST speaks, by the SDK's classifier over the body we already parsed: the function
 * `isLegacyRequest` and `createMcpHandler` call once they hold the body and the three MCP headers, called
 * here without the web `Request` they read them from (building one per POST was ~2 % of the daemon's CPU
 * in bench row 4). A POST without a JSON body is legacy, as there. Only a modern POST gets a `Request`
 * (sdkRequest), for the modern leg.
 */
export function generationOf(req: IncomingMessage, body: unknown): Generation {
  if (body === undefined) return 'legacy';
  if (plainLegacyRequest(header(req, 'mcp-protocol-version'), body)) return 'legacy';
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header(req, 'mcp-protocol-version'),
    mcpMethodHeader: header(req, 'mcp-method'),
    mcpNameHeader: header(req, 'mcp-name'),
    body,
  });
  return outcome.kind === 'legacy' ? 'legacy' : 'modern';
}

/** The first revision the SDK serves per request (its isModernProtocolVersion: at or after it). */
const FIRST_MODERN = '2026-07-28';
const DATE_VERSION = /^\d{4}-\d{2}-\d{2}$/;

/** An object that is not an array, as the SDK's classifier tests it. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * True for what nearly every 2025-era POST is — one JSON-RPC request with no envelope claim, under no
 * modern version header — for which the SDK's classifier answers `legacy` (its classifyRequestBody), found
 * with one of its schema checks instead of three: it first tries the body as a result and as an error
 * response, and those failing checks were most of its cost (~2 % of the daemon's CPU in bench row 4). The
 * request schema (the SDK's own check, here too) is strict, so a body it accepts has no `result` or `error`,
 * which both response schemas require. Anything else (a claim, a modern or unusual header, a response, a
 * notification, a batch, a malformed body) goes to the classifier itself (generations.test.ts compares).
 */
function plainLegacyRequest(versionHeader: string | undefined, body: unknown): boolean {
  if (versionHeader !== undefined && !(DATE_VERSION.test(versionHeader) && versionHeader < FIRST_MODERN)) {
    return false;
  }
  if (!isPlainObject(body)) return false;
  const params = body.params;
  const meta = isPlainObject(params) ? params._meta : undefined;
  if (isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta) return false;
  return isJSONRPCRequest(body);
}

/** Builds one 2026-07-28 server instance for one request, acting for `client`. */
export type ModernFactory = (client: string) => Server;

export interface ModernLeg {
  /** Serves one modern POST (`probe` from sdkRequest) for `client`, already authenticated; `body` is the parsed JSON. */
  serve(probe: Request, res: ServerResponse, body: unknown, client: string): Promise<void>;
  close(): Promise<void>;
}

/** The media type of a Content-Type value, lower-cased, without parameters. */
function mediaType(value: string | null): string {
  return (value ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** The per-request 2026-07-28 leg; a change of the tool set reaches open `subscriptions/listen` streams. */
export function createModernLeg(factory: ModernFactory, tools: ToolSet, log: Logger): ModernLeg {
  const handler = createMcpHandler(
    ({ authInfo }) => {
      // authInfo is ours alone: set below from the token we checked, never read from a header by the SDK.
      const client = authInfo?.clientId;
      if (client === undefined) throw new Error('modern MCP request without an authenticated client');
      return factory(client);
    },
    {
      legacy: 'reject',
      onerror: (e) => log.log('info', 'mcp_modern_rejected', { error: e.message.slice(0, 300) }),
    },
  );
  const stop = tools.onChange(() => handler.notify.toolsChanged());
  return {
    // In place of @modelcontextprotocol/node's toNodeHandler (bench row 9): that adapter copies every
    // header into a second Request, serialises the parsed body again to give it one, and streams every
    // answer chunk by chunk as chunked encoding. Here the SDK gets the request it classified, and a JSON
    // answer goes out in one write with its length; an SSE answer (progress, subscriptions/listen) is
    // streamed exactly as the adapter does, with backpressure and an end when the client goes away.
    async serve(probe, res, body, client) {
      // The SDK ends the exchange (and so the call's wait) when the request's signal aborts: when the
      // client goes away before the answer is written.
      const abort = new AbortController();
      const request = new Request(probe, { signal: abort.signal });
      let finished = false;
      res.once('close', () => {
        if (!finished) abort.abort();
      });
      if (res.destroyed) abort.abort();
      // The token itself never travels further than the check that already passed.
      const authInfo: AuthInfo = { token: '', clientId: client, scopes: [] };
      let response: Response;
      try {
        response = await handler.fetch(request, { authInfo, parsedBody: body });
      } catch (e) {
        log.log('warn', 'mcp_modern_failed', { error: (e as Error).message });
        response = Response.json(
          { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error.' }, id: null },
          { status: 500 },
        );
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of response.headers) headers[name] = value;
      if (response.body === null) {
        finished = true;
        res.writeHead(response.status, headers).end();
        return;
      }
      if (mediaType(response.headers.get('content-type')) !== 'text/event-stream') {
        // As text: Node then writes the head and the body in one write of one string, where a Buffer body
        // goes out with its head as a writev (issue 41: 0.5 ms more of the daemon's time per call).
        const text = await response.text();
        headers['content-length'] = String(Buffer.byteLength(text));
        finished = true;
        res.writeHead(response.status, headers).end(text);
        return;
      }
      res.writeHead(response.status, headers);
      await streamEvents(response.body, res, abort.signal);
      finished = true;
      res.end();
    },
    async close() {
      stop();
      await handler.close();
    },
  };
}

/** An SSE answer streamed as it comes, with backpressure, until it ends or the client goes away (`signal`). */
async function streamEvents(
  body: ReadableStream<Uint8Array>,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  let drained: (() => void) | undefined;
  const onDrain = () => {
    drained?.();
    drained = undefined;
  };
  res.on('drain', onDrain);
  const closed = new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (signal.aborted) {
        // The client is gone: stop the stream (the SDK's close chain runs on its cancel).
        await reader.cancel().catch(() => {});
        break;
      }
      if (!res.write(value)) await Promise.race([new Promise<void>((r) => (drained = r)), closed]);
    }
  } catch {
    // The stream ended with the exchange (closed or aborted): nothing more to write.
  }
  res.off('drain', onDrain);
}
