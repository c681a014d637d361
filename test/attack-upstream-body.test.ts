/**
 * Attack: an HTTP upstream answers an approved `tools/call` with an endless body. The SDK's Streamable HTTP
 * client reads a JSON answer whole, so before the fix the daemon buffered it until its memory ran out. Now one
 * message may weigh at most 8 MiB (daemon/upstreams/bounded-fetch.ts): the daemon stops reading, the call ends
 * `UNKNOWN`/`UpstreamError` (its answer could not be read; it may have run), and the daemon carries on.
 * The upstream is a raw node:http server speaking just enough MCP, so it can misbehave at the byte level.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket } from './helpers/owner.js';

let upstream: Server;
let d: RunningDaemon;
/** Bytes of the endless answer written before the daemon hung up. */
let written = 0;
let hungUp = false;

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Frame> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text) as Frame;
}

/** Streams `{"jsonrpc":"2.0","id":N,"result":{"content":[{"type":"text","text":"xxxx…` for ever. */
function endless(res: ServerResponse, id: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
  res.on('close', () => {
    hungUp = true;
  });
  const pump = () => {
    while (!res.destroyed && written < 512 * 1024 * 1024) {
      written += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    void readBody(req).then((m) => {
      if (m.id === undefined) {
        res.writeHead(202).end();
      } else if (m.method === 'initialize') {
        json(res, {
          jsonrpc: '2.0',
          id: m.id,
          result: {
            protocolVersion: m.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'endless', version: '1' },
          },
        });
      } else if (m.method === 'tools/list') {
        json(res, {
          jsonrpc: '2.0',
          id: m.id,
          result: { tools: [{ name: 'big', inputSchema: { type: 'object' } }] },
        });
      } else if (m.method === 'tools/call') {
        endless(res, m.id);
      } else {
        json(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
      }
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const { port } = upstream.address() as AddressInfo;
  d = await startDaemon({
    dataDir: makeDataDir('ogf-attack-body-'),
    config: { upstreams: { endless: { url: `http://127.0.0.1:${port}/mcp`, timeout_s: 120 } } },
  });
});

afterAll(async () => {
  await d?.stop();
  await new Promise((r) => upstream.close(r));
});

describe('[c7.outcomes] an upstream answering with an endless body', () => {
  it('is cut after one message’s bound: the call ends UNKNOWN/UpstreamError and the daemon carries on', async () => {
    const ai = await mcpClient(d);
    const owner = await OwnerSocket.open(d);
    await waitFor(
      async () => (await ai.listTools()).tools.some((t) => t.name === 'endless__big'),
      'endless__big listed',
    );
    // An upstream tool waits its upstream's wait_seconds (50 s) for the owner: approve while it waits.
    const answer = ai.callTool({ name: 'endless__big', arguments: {} }, undefined, { timeout: 120_000 });
    const pending = await owner.waitFor(
      (f) => f.type === 'upsert' && f.command.command === 'endless__big',
      'the call queued',
    );
    const v = pending.command as Frame;
    expect((await owner.request({ type: 'approve', id: v.id, version: v.version })).ok).toBe(true);
    const done = await owner.view(v.id, (x) => x.status !== 'PENDING', 'the call to end');
    // Its answer could not be read, and the call may have run: UNKNOWN, saying why.
    expect(done).toMatchObject({ status: 'UNKNOWN', reason: 'UpstreamError' });
    const result = ((await answer) as { structuredContent?: Frame }).structuredContent!;
    expect(result).toMatchObject({ status: 'UNKNOWN', reason: 'UpstreamError' });
    expect(result.detail).toMatch(
      /could not be read \(the upstream sent one message of more than 8388608 bytes\)/,
    );
    await waitFor(() => hungUp, 'the daemon to hang up on the endless body', 30_000);
    expect(written).toBeLessThan(64 * 1024 * 1024);
    expect(d.stderr()).toContain('upstream_message_refused');
    // The daemon still serves: another request is answered.
    expect((await ai.listTools()).tools.length).toBeGreaterThan(0);
    expect(d.child.exitCode).toBeNull();
    await owner.close();
    await ai.close();
  });
});
