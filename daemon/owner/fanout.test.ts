/**
 * The fan-out (fanout.ts) over real WebSockets: what a commit fans out to an owner is held in the socket
 * until the next microtask (ahead of the work the commit's callers resume), then written in one go, in the
 * order it was sent — frames sent straight to that owner meanwhile included.
 */
import type { AddressInfo } from 'node:net';
import { setImmediate as turnEnd } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer, WebSocket as WsClient } from 'ws';
import { silentLogger } from '../base/index.js';
import { FanOut } from './fanout.js';
import { type Owner, OwnerRegistry } from './registry.js';

/** A server-side socket (as an Owner) and the client that reads what it is sent. */
async function pair(): Promise<{ owner: Owner; got: string[]; close(): void }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const accepted = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
  const client = new WsClient(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const got: string[] = [];
  client.on('message', (data) => got.push(String(data)));
  await new Promise((resolve) => client.once('open', resolve));
  const ws = await accepted;
  const owner = { ws, by: 'owner', alive: true, viaPasskey: false, allowance: 0 } as unknown as Owner;
  return {
    owner,
    got,
    close() {
      client.close();
      server.close();
    },
  };
}

describe('FanOut', () => {
  it("holds one batch's fan-out until the next microtask, then writes it in the order sent", async () => {
    const p = await pair();
    try {
      const owners = new OwnerRegistry(silentLogger);
      owners.add(p.owner);
      // No command View is made here: the kinds' policies are never read.
      const fan = new FanOut(owners, silentLogger, () => false, {} as never);
      const socket = (p.owner.ws as unknown as { _socket: { writableCorked: number } })._socket;
      fan.text('{"n":1}');
      fan.text('{"n":2}');
      fan.send(p.owner, { type: 'error', code: 'NotFound', message: 'three' } as never);
      expect(socket.writableCorked).toBe(1);
      // Released ahead of what was queued after the fan-out (a commit's callers resume after it).
      let released: number | undefined;
      queueMicrotask(() => {
        released = socket.writableCorked;
      });
      await Promise.resolve();
      expect(released).toBe(0);
      await turnEnd();
      await expect.poll(() => p.got.length).toBe(3);
      expect(p.got.map((t) => JSON.parse(t))).toEqual([
        { n: 1 },
        { n: 2 },
        { type: 'error', code: 'NotFound', message: 'three' },
      ]);
      // A later batch is held (and written) on its own.
      fan.text('{"n":4}');
      expect(socket.writableCorked).toBe(1);
      await expect.poll(() => p.got.length).toBe(4);
      expect(socket.writableCorked).toBe(0);
    } finally {
      p.close();
    }
  });
});
