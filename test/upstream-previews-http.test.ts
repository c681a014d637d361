/**
 * Contract 12 (v4): an HTTP upstream's previews use a session of their own. The upstream here is the MCP SDK's
 * own Streamable HTTP server (stateful sessions) in the test process, with a `put` tool and a read-only `peek`
 * the preview reads through; it records the session every request came on, so the test sees which
 * connection carried the preview's read and which the owner-approved call. Real daemon, real SDK client.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, type McpClient, structured } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

/** Every tools/list and tools/call the upstream got, with the session it came on. */
const seen: Array<{ method: string; tool?: string; session: string }> = [];
const transports = new Map<string, StreamableHTTPServerTransport>();

function mcpServer(session: () => string): Server {
  const server = new Server({ name: 'http-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  const file = { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } };
  server.setRequestHandler(ListToolsRequestSchema, () => {
    seen.push({ method: 'tools/list', session: session() });
    return {
      tools: [
        { name: 'put', description: 'Writes a file.', inputSchema: file },
        {
          name: 'peek',
          description: 'Reads a file.',
          inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
          annotations: { readOnlyHint: true },
        },
      ],
    };
  });
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    seen.push({ method: 'tools/call', tool: req.params.name, session: session() });
    const text = req.params.name === 'peek' ? 'old line\n' : 'wrote';
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      try {
        resolve(chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    req.once('error', reject);
  });
}

let upstream: HttpServer;
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (transport === undefined) {
        let id = '';
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (s) => {
            id = s;
            transports.set(s, t);
          },
        });
        transport = t;
        await mcpServer(() => id).connect(t);
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const { port } = upstream.address() as AddressInfo;
  d = await startDaemon({
    config: {
      upstreams: {
        h: {
          url: `http://127.0.0.1:${port}/mcp`,
          wait_seconds: 0,
          previews: { put: { kind: 'file_diff', read: 'peek', path_arg: 'path', content_arg: 'content' } },
        },
      },
    },
  });
  ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  await waitFor(async () => (await ai.listTools()).tools.some((t) => t.name === 'h__put'), 'h__put listed');
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
});

describe('[c12.http-session] previews of an HTTP upstream', () => {
  it('[c12.http-session] the preview reads through a session of its own; the approved call goes through the upstream’s', async () => {
    const r = structured(await call(ai, 'h__put', { path: 'a.txt', content: 'new line\n' }));
    expect(r.status).toBe('PENDING');
    const id = String(r.pending_id);
    const v = await owner.view(id, (x) => x.preview?.status === 'ready', `${id}'s preview`);
    expect(v.preview.diff).toContain('-old line\n+new line\n');
    expect(await owner.request({ type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
    await owner.view(id, (x) => x.status === 'SUCCEEDED', `${id} succeeded`);
    const main = seen.find((s) => s.method === 'tools/list')?.session;
    const peek = seen.find((s) => s.tool === 'peek')?.session;
    const put = seen.find((s) => s.tool === 'put')?.session;
    expect(main).toBeTruthy();
    expect(put).toBe(main);
    expect(peek).toBeTruthy();
    expect(peek).not.toBe(main);
  });
});
