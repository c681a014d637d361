/**
 * Both MCP protocol generations on one URL (contract 10). The SDK's own classifier decides (isLegacyRequest:
 * "runs exactly the code createMcpHandler runs to make the routing decision"): a request carrying the
 * 2026-07-28 per-request `_meta` envelope claim is modern and is served per request by `createMcpHandler`
 * (strict, `legacy: 'reject'`); everything else — `initialize`, `Mcp-Session-Id` traffic, GET streams,
 * DELETE — is 2025-era and keeps the stateful sessions of ./http.ts. Our own checks (Host, token, Origin,
 * body size, JSON) run before either leg, so both see the same gate.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler, isLegacyRequest, type Server } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import type { ToolSet } from './toolset.js';

/** `legacy` = 2024-11-05 … 2025-11-25 (initialize, sessions); `modern` = 2026-07-28 (server/discover, envelope). */
export type Generation = 'legacy' | 'modern';

/** The headers the SDK's classifier reads; the body it reads is the one we already parsed. */
const CLASSIFIER_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'content-type'];

/** Which generation a request speaks, by the SDK's classifier over the body we already parsed. */
export async function generationOf(req: IncomingMessage, body: unknown): Promise<Generation> {
  // GET and DELETE are session operations (2025) and a body that is not JSON never gets here.
  if (req.method !== 'POST') return 'legacy';
  const headers = new Headers();
  for (const name of CLASSIFIER_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  const probe = new Request('http://mcp.invalid/mcp', { method: 'POST', headers });
  return (await isLegacyRequest(probe, body)) ? 'legacy' : 'modern';
}

/** Builds one 2026-07-28 server instance for one request, acting for `client`. */
export type ModernFactory = (client: string) => Server;

export interface ModernLeg {
  /** Serves one modern request for `client` (already authenticated); `body` is the parsed JSON. */
  serve(req: IncomingMessage, res: ServerResponse, body: unknown, client: string): Promise<void>;
  close(): Promise<void>;
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
  const node = toNodeHandler(handler, {
    onerror: (e) => log.log('warn', 'mcp_modern_failed', { error: e.message }),
  });
  return {
    async serve(req, res, body, client) {
      // The token itself never travels further than the check that already passed.
      const auth: AuthInfo = { token: '', clientId: client, scopes: [] };
      await node(Object.assign(req, { auth }), res, body);
    },
    async close() {
      stop();
      await handler.close();
    },
  };
}
