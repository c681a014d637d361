/**
 * The list_changed plumbing (contract 3.1): a source that changes the tool set makes every 2025-era session
 * hear `notifications/tools/list_changed` unsolicited and every open 2026-07-28 `subscriptions/listen` stream
 * hear it there — and nobody hears anything when the set did not change. Driven by the v2 SDK Client over
 * the real server (in-memory link for 2025, real HTTP through the modern leg for 2026-07-28).
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InMemoryTransport, type Tool } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../base/log.js';
import type { BrokerApi } from '../core/index.js';
import { RUN_COMMAND_TOOL } from '../kinds/catalog/source.js';
import { OGF_CUE_TOOL } from '../kinds/cue/source.js';
import { createModernLeg, sdkRequest } from './generations.js';
import { AWAIT_TOOL } from './schemas.js';
import { createMcpServer } from './server.js';
import { type ListedTool, ToolSet } from './toolset.js';

const EXTRA: Tool = { name: 'notes__read', description: 'Read a note', inputSchema: { type: 'object' } };

/** Tool calls never happen in these tests: list_changed needs no broker. */
const unused = () => {
  throw new Error('not used by the list_changed tests');
};

/** The tools as listed entries (their calls are never made here). */
const listed = (...tools: Tool[]): ListedTool[] => tools.map((tool) => ({ tool, call: unused }));
const BUILT_IN = [RUN_COMMAND_TOOL, OGF_CUE_TOOL, AWAIT_TOOL];

function serverFor(tools: ToolSet, generation: 'legacy' | 'modern') {
  return createMcpServer({
    tools,
    broker: {} as BrokerApi,
    client: 'local',
    version: 'test',
    generation,
    answer: unused,
  });
}

/** Resolves after `n` notifications/tools/list_changed reached `client`; `count()` says how many so far. */
function counter(client: Client) {
  let n = 0;
  const waiters: Array<() => void> = [];
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    n++;
    for (const w of waiters.splice(0)) w();
  });
  return {
    count: () => n,
    next: () => new Promise<void>((r) => waiters.push(r)),
  };
}

let cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('[c3.1.list-changed] notifications/tools/list_changed', () => {
  it('ToolSet tells its listeners only when what a client sees changed', () => {
    const tools = new ToolSet(listed(...BUILT_IN));
    let heard = 0;
    const stop = tools.onChange(() => heard++);
    tools.replace(listed(...BUILT_IN));
    expect(heard).toBe(0);
    tools.replace(listed(...BUILT_IN, EXTRA));
    expect(heard).toBe(1);
    expect(tools.get('notes__read')?.tool).toEqual(EXTRA);
    stop();
    tools.replace(listed(RUN_COMMAND_TOOL));
    expect(heard).toBe(1);
  });

  it('reaches a 2025-era session, which then lists the new set', async () => {
    const tools = new ToolSet(listed(...BUILT_IN));
    const server = serverFor(tools, 'legacy');
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 't', version: '1' });
    const heard = counter(client);
    await server.connect(a);
    await client.connect(b);
    cleanup.push(
      () => client.close(),
      () => server.close(),
    );
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);

    const arrived = heard.next();
    tools.replace(listed(...BUILT_IN, EXTRA));
    await arrived;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('notes__read');
    // The same set again changes nothing a client sees, so nothing more is sent.
    tools.replace(listed(...BUILT_IN, EXTRA));
    await client.listTools();
    expect(heard.count()).toBe(1);
  });

  it('reaches an open 2026-07-28 subscriptions/listen stream', async () => {
    const tools = new ToolSet(listed(...BUILT_IN));
    const leg = createModernLeg(() => serverFor(tools, 'modern'), tools, silentLogger);
    const http: HttpServer = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => {
        raw += c.toString();
      });
      req.on('end', () => void leg.serve(sdkRequest(req), res, JSON.parse(raw), 'local'));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const port = (http.address() as AddressInfo).port;
    cleanup.push(
      () => new Promise((r) => http.close(r)),
      () => leg.close(),
    );

    const client = new Client(
      { name: 't', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const heard = counter(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    cleanup.push(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
    const sub = await client.listen({ toolsListChanged: true });
    cleanup.push(() => sub.close());

    const arrived = heard.next();
    tools.replace(listed(...BUILT_IN, EXTRA));
    await arrived;
    expect(heard.count()).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('notes__read');
  });
});
