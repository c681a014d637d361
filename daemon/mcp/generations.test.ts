/**
 * The 2026-07-28 leg's own HTTP adapter (./generations.ts, in place of the SDK's toNodeHandler): a JSON
 * answer is written whole with its length, and a client that goes away ends the call's wait (the tool's
 * signal aborts: toolset.ts CallContext.signal, "the wait ends, the command stays"). Driven by the v2 SDK
 * Client pinned to 2026-07-28 over real HTTP into the real SDK server; progress over SSE is covered by
 * test/mcp-tools.test.ts in both generations.
 */
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../base/log.js';
import type { BrokerApi } from '../core/index.js';
import { createModernLeg, type Generation, generationOf, type ModernLeg, sdkRequest } from './generations.js';
import { createMcpServer } from './server.js';
import { type ListedTool, ToolSet } from './toolset.js';

let cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** The modern leg over `entries`, acting through a gate server for whichever client; closed after the test. */
function legOver(entries: ListedTool[]): ModernLeg {
  const tools = new ToolSet(entries);
  const leg = createModernLeg(
    (client) =>
      createMcpServer({
        tools,
        broker: {} as BrokerApi,
        client,
        version: 'test',
        generation: 'modern',
        answer: () => ({ content: [] }),
      }),
    tools,
    silentLogger,
  );
  cleanup.push(() => leg.close());
  return leg;
}

/** A real HTTP server handing each POST's parsed JSON body to `handle`; its `/mcp` URL. Closed after the test. */
async function listen(
  handle: (req: IncomingMessage, res: ServerResponse, body: unknown) => unknown,
): Promise<string> {
  const http: HttpServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => void handle(req, res, JSON.parse(raw) as unknown));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise((r) => {
        http.close(r);
        http.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

/** A real HTTP server whose every request goes to the modern leg, acting for client `local`. */
function serve(entries: ListedTool[]): Promise<string> {
  const leg = legOver(entries);
  return listen((req, res, body) => leg.serve(sdkRequest(req), res, body, 'local'));
}

async function modernClient(url: string, fetch?: typeof globalThis.fetch): Promise<Client> {
  const client = new Client(
    { name: 't', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), fetch ? { fetch } : {}));
  cleanup.push(() => client.close());
  expect(client.getProtocolEra()).toBe('modern');
  return client;
}

describe('the 2026-07-28 leg over HTTP', () => {
  it('writes a JSON answer whole, with its Content-Length (no chunked encoding)', async () => {
    const url = await serve([
      {
        tool: { name: 'hello', inputSchema: { type: 'object' } },
        call: async () => ({ content: [{ type: 'text', text: 'hi' }] }),
      },
    ]);
    const seen: Array<{ type: string | null; length: string | null; chunked: boolean; bytes: number }> = [];
    const recording: typeof globalThis.fetch = async (input, init) => {
      const r = await fetch(input, init);
      const body = await r.clone().arrayBuffer();
      seen.push({
        type: r.headers.get('content-type'),
        length: r.headers.get('content-length'),
        chunked: r.headers.get('transfer-encoding') === 'chunked',
        bytes: body.byteLength,
      });
      return r;
    };
    const client = await modernClient(url, recording);
    const r = await client.callTool({ name: 'hello', arguments: {} });
    expect(r.content).toEqual([{ type: 'text', text: 'hi' }]);
    const answer = seen.at(-1)!;
    expect(answer.type).toMatch(/^application\/json/);
    expect(answer.chunked).toBe(false);
    expect(Number(answer.length)).toBe(answer.bytes);
  });

  it('ends the call (its signal aborts) when the client goes away before the answer', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    let aborted!: (reason: unknown) => void;
    const ended = new Promise<unknown>((r) => {
      aborted = r;
    });
    const url = await serve([
      {
        tool: { name: 'hold', inputSchema: { type: 'object' } },
        call: (_args, call) =>
          new Promise((resolve) => {
            call.signal.addEventListener('abort', () => {
              aborted(call.signal.reason);
              resolve({ content: [] });
            });
            started();
          }),
      },
    ]);
    const client = await modernClient(url);
    const gone = new AbortController();
    const call = client.callTool({ name: 'hold', arguments: {} }, { signal: gone.signal });
    await running;
    gone.abort();
    await expect(call).rejects.toThrow();
    // The state, not a timing: the tool's signal has aborted (it would otherwise hold until the process ends).
    await expect(ended).resolves.toBeDefined();
  });

  it('routes every POST as the SDK isLegacyRequest does, without building a Request for it', async () => {
    const leg = legOver([]);
    const seen: Array<{ ours: Generation; sdk: Generation }> = [];
    const url = await listen(async (req, res, body) => {
      const ours = generationOf(req, body);
      const sdk = (await isLegacyRequest(sdkRequest(req), body)) ? 'legacy' : 'modern';
      seen.push({ ours, sdk });
      if (ours === 'modern') await leg.serve(sdkRequest(req), res, body, 'local');
      else res.writeHead(204).end();
    });
    // A real 2026-07-28 client: discovery and a list.
    const client = await modernClient(url);
    await client.listTools();
    // 2025-era and edge bodies, as a 2025 client (or a confused one) posts them.
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
      }).then((r) => r.body?.cancel());
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } };
    await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    await post(call, { 'mcp-session-id': 's1', 'mcp-protocol-version': '2025-11-25' });
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await post([call, { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    await post({ jsonrpc: '2.0', id: 3, result: {} });
    await post(call, { 'mcp-protocol-version': '2026-07-28' }); // a modern header without the envelope
    // The edges of generationOf's shortcut for a plain 2025 request (plainLegacyRequest): each is either
    // answered by it or handed to the classifier, and must route as the SDK does either way.
    const claim = { [PROTOCOL_VERSION_META_KEY]: '2026-07-28' };
    const bodies: unknown[] = [
      { ...call, params: { ...call.params, _meta: { progressToken: 7 } } },
      { ...call, params: { ...call.params, _meta: claim } },
      { ...call, params: { ...call.params, _meta: { [PROTOCOL_VERSION_META_KEY]: '2025-11-25' } } },
      { ...call, params: { ...call.params, _meta: { [PROTOCOL_VERSION_META_KEY]: 7 } } },
      { ...call, params: { ...call.params, _meta: 'not an object' } },
      { ...call, params: 5 },
      { ...call, id: 1.5 },
      { ...call, jsonrpc: '1.0' },
      { ...call, method: 7 },
      { ...call, extra: true },
      { ...call, result: {} },
      { ...call, error: { code: 1, message: 'x' } },
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'no' } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: claim } },
      { jsonrpc: '2.0', id: 5, method: 'initialize', params: { _meta: claim } },
      [{ ...call, params: { _meta: claim } }],
      [],
      'a string',
      null,
      42,
    ];
    const headers: Array<Record<string, string>> = [
      {},
      { 'mcp-protocol-version': '2025-06-18' },
      { 'mcp-protocol-version': ' 2025-11-25 ' },
      { 'mcp-protocol-version': '2026-07-28 ' },
      { 'mcp-protocol-version': '2027-01-01' },
      { 'mcp-protocol-version': 'latest' },
      { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' },
    ];
    for (const body of bodies) for (const h of headers) await post(body, h);
    expect(seen.length).toBeGreaterThanOrEqual(8 + bodies.length * headers.length);
    for (const s of seen) expect(s.ours).toBe(s.sdk);
    expect(new Set(seen.map((s) => s.ours))).toEqual(new Set(['legacy', 'modern']));
  });
});
