/**
 * Row 9's floor, in its own process like the daemon: the MCP SDK v2 the daemon is built on, serving both
 * protocol generations on one URL with nothing of ours — a 2025-era session on the SDK's
 * `NodeStreamableHTTPServerTransport`, a 2026-07-28 request on `createMcpHandler` (one `Server` per request,
 * as that API requires), the SDK's own classifier choosing. It lists one tool and answers every call with
 * one fixed result: both given as JSON in argv[2] (`{ tool, result }`), the daemon's own tool and answer, so
 * both generations' clients validate the same schema and read the same bytes as through the daemon. The
 * difference between its two generations is what the SDKs themselves cost (issue 41). Prints one JSON
 * line with its URL.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import {
  type CallToolResult,
  classifyInboundRequest,
  createMcpHandler,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';
import { readJson } from './lib/read-json.js';

const { tool, result } = JSON.parse(process.argv[2] ?? '{}') as { tool: Tool; result: CallToolResult };

function echoServer(): Server {
  const server = new Server({ name: 'bare-generations', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: [tool] }));
  server.setRequestHandler('tools/call', () => result);
  return server;
}

function one(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

const sessions = new Map<string, NodeStreamableHTTPServerTransport>();

async function legacy(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const sid = one(req, 'mcp-session-id');
  let transport = sid === undefined ? undefined : sessions.get(sid);
  if (transport === undefined) {
    const t: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, t);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport = t;
    await echoServer().connect(t);
  }
  await transport.handleRequest(req, res, body);
}

const handler = createMcpHandler(() => echoServer(), { legacy: 'reject' });

/** A 2026-07-28 POST: the least the SDK's web-standard handler needs (the MCP headers, the parsed body). */
async function modern(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const headers = new Headers();
  for (const name of ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'content-type', 'accept']) {
    const v = one(req, name);
    if (v !== undefined) headers.set(name, v);
  }
  const response = await handler.fetch(new Request('http://bare.invalid/mcp', { method: 'POST', headers }), {
    parsedBody: body,
  });
  const out: Record<string, string> = {};
  for (const [name, value] of response.headers) out[name] = value;
  const text = await response.text();
  out['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(response.status, out).end(text);
}

const http = createServer((req, res) => {
  void (async () => {
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const kind =
      req.method === 'POST' && body !== undefined
        ? classifyInboundRequest({
            httpMethod: 'POST',
            protocolVersionHeader: one(req, 'mcp-protocol-version'),
            mcpMethodHeader: one(req, 'mcp-method'),
            mcpNameHeader: one(req, 'mcp-name'),
            body,
          }).kind
        : 'legacy';
    await (kind === 'legacy' ? legacy(req, res, body) : modern(req, res, body));
  })().catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});
http.listen(0, '127.0.0.1', () => {
  const port = (http.address() as AddressInfo).port;
  process.stdout.write(`${JSON.stringify({ mcp: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.once('SIGTERM', () => process.exit(0));
