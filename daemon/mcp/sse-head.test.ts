/**
 * A POST's SSE head goes out with its first event (./sse-head.ts), read from a raw socket on a real HTTP
 * server: the bytes of one write arrive together, so a head held for the event comes in the same read as
 * the event; and a head whose event is late still comes on its own, soon, before the event.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { holdHeadForFirstEvent } from './sse-head.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

const EVENT = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';

/** A server answering each request as the SDK's adapter does: an SSE head, flushHeaders(), then `answer`. */
async function serve(answer: (res: ServerResponse) => void, holdMs?: number): Promise<number> {
  server = createServer((_req, res) => {
    if (holdMs !== undefined) holdHeadForFirstEvent(res, holdMs);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    answer(res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** POSTs on a raw socket; resolves with each read's text as it came, once `until` holds for what arrived. */
function post(port: number, until: (all: string) => boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const reads: string[] = [];
    const s = connect(port, '127.0.0.1', () => {
      s.write('POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-length: 2\r\n\r\n{}');
    });
    s.on('data', (b: Buffer) => {
      reads.push(b.toString());
      if (until(reads.join(''))) {
        s.destroy();
        resolve(reads);
      }
    });
    s.on('error', reject);
  });
}

describe('holdHeadForFirstEvent', () => {
  it('sends the head in the same write as the first event', async () => {
    const port = await serve((res) => {
      setTimeout(() => res.end(EVENT), 5);
    }, 1000);
    const reads = await post(port, (all) => all.includes('"result"'));
    expect(reads[0]).toMatch(/^HTTP\/1.1 200 OK/);
    expect(reads[0]).toContain('"result"');
  });

  it('sends the head alone when no event comes within the hold (a call waiting for its owner)', async () => {
    const port = await serve(() => {}, 20);
    // The state, not a timing: the head arrives while no event has been written at all.
    const reads = await post(port, (all) => all.includes('\r\n\r\n'));
    expect(reads.join('')).toMatch(/^HTTP\/1.1 200 OK/);
    expect(reads.join('')).not.toContain('"result"');
  });
});
