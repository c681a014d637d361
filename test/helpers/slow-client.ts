/**
 * The slow client of the attack suites: real loopback TCP connections that send a request a byte at a time
 * (slow-loris), recording what the daemon answered and whether it, not the client, ended the connection.
 * Every group is bounded in count and stopped by the test; nothing here ever leaves 127.0.0.1.
 */
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface SlowConnection {
  socket: Socket;
  /** Bytes of the dribbled part written so far. */
  sent: number;
  /** What the daemon wrote back. */
  received: string;
  /** The connection has ended (by either side). */
  closed: boolean;
  /** The client had written its whole request before the connection ended. */
  finished: boolean;
}

export interface SlowGroup {
  connections: SlowConnection[];
  /** Connections the daemon ended before the client had sent its whole request. */
  cutEarly(): SlowConnection[];
  open(): SlowConnection[];
  stop(): void;
}

export interface SlowOptions {
  port: number;
  count: number;
  /** Written at once on connect (e.g. complete headers, when only the body is to be slow). */
  head?: string;
  /** Written one byte per tick after `head`. */
  drip: string;
  tickMs: number;
}

/**
 * Opens `count` connections to 127.0.0.1:`port`; each writes `head` at once, then one byte of `drip` per
 * tick (one shared timer for the group, so a thousand connections cost one timer).
 */
export function slowGroup(opts: SlowOptions): SlowGroup {
  const connections: SlowConnection[] = [];
  for (let i = 0; i < opts.count; i++) {
    const socket = connect(opts.port, '127.0.0.1');
    const c: SlowConnection = { socket, sent: 0, received: '', closed: false, finished: false };
    socket.on('connect', () => {
      if (opts.head !== undefined) socket.write(opts.head);
      // The first byte at once: the request has begun, so its deadlines run from now.
      if (opts.drip.length > 0) {
        socket.write(opts.drip[0]!);
        c.sent = 1;
      }
    });
    socket.on('data', (b: Buffer) => {
      c.received += b.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      c.closed = true;
    });
    connections.push(c);
  }
  const timer = setInterval(() => {
    for (const c of connections) {
      if (c.closed || c.sent === 0 || c.sent >= opts.drip.length) continue;
      c.socket.write(opts.drip[c.sent]!);
      c.sent++;
      if (c.sent === opts.drip.length) c.finished = true;
    }
  }, opts.tickMs);
  return {
    connections,
    cutEarly: () => connections.filter((c) => c.closed && !c.finished),
    open: () => connections.filter((c) => !c.closed),
    stop() {
      clearInterval(timer);
      for (const c of connections) c.socket.destroy();
    },
  };
}

/** How many descriptors process `pid` has open now (Linux /proc). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}
