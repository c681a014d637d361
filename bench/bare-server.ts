/**
 * The baseline servers, in their own process like the daemon: a bare `@modelcontextprotocol/sdk` server
 * with one `echo` tool over the same Streamable HTTP transport the daemon uses (stateful sessions, the
 * SDK's default SSE responses), and a bare `ws` server that sends one frame of `?bytes=N` on connect.
 * Nothing of ours runs here: this is what the transport alone costs. Prints one JSON line with the URLs.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WebSocketServer } from 'ws';
import { readJson } from './lib/read-json.js';

const transports = new Map<string, StreamableHTTPServerTransport>();

function echoServer(): Server {
  const server = new Server({ name: 'bare-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'echo', description: 'Echo the arguments', inputSchema: { type: 'object' } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    const args = req.params.arguments ?? {};
    return { content: [{ type: 'text', text: JSON.stringify(args) }], structuredContent: args };
  });
  return server;
}

const blobs = new Map<number, string>();
function blob(bytes: number): string {
  let b = blobs.get(bytes);
  if (b === undefined) {
    b = JSON.stringify({ type: 'snapshot', pad: 'x'.repeat(Math.max(0, bytes - 32)) });
    blobs.set(bytes, b);
  }
  return b;
}

const wss = new WebSocketServer({ noServer: true });
const http = createServer((req, res) => {
  void (async () => {
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (transport === undefined) {
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, t);
        },
        onsessionclosed: (id) => {
          transports.delete(id);
        },
      });
      transport = t;
      await echoServer().connect(t);
    }
    await transport.handleRequest(req, res, body);
  })().catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});
http.on('upgrade', (req, socket, head) => {
  const bytes = Number(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('bytes') ?? '0');
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.send(blob(bytes));
  });
});
http.listen(0, '127.0.0.1', () => {
  const port = (http.address() as AddressInfo).port;
  process.stdout.write(
    `${JSON.stringify({ mcp: `http://127.0.0.1:${port}/mcp`, ws: `ws://127.0.0.1:${port}/blob` })}\n`,
  );
});
process.once('SIGTERM', () => process.exit(0));
