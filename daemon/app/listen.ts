/**
 * The daemon's HTTP server: its connection limits from the descriptor limit (http/connections.ts), and
 * listening on its host and port (contract 1.1: `--port 0` picks a free port) — the port it got, or a
 * one-line UsageError (exit 2) when the port is taken.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, UsageError } from '../base/index.js';
import {
  type ConnectionLimits,
  connectionLimits,
  createHttpServer,
  descriptorLimit,
  type Edge,
  type Flight,
  type Origins,
} from '../http/index.js';

/** The server routing to the edges `edges()` names when a request comes (they are mounted after it listens). */
export function httpServer(o: {
  flight: Flight;
  origins: Origins;
  edges: () => readonly Edge[];
  env: NodeJS.ProcessEnv;
  log: Logger;
}): { server: Server; limits: ConnectionLimits } {
  // Computed once: the HTTP server's gate and the owner edge's login gate share them (connections.ts).
  const fdLimit = descriptorLimit();
  const limits = connectionLimits(fdLimit, o.env, (reason) =>
    o.log.log('warn', 'http_max_connections_ignored', { reason }),
  );
  o.log.log('info', 'http_limits', {
    max_connections: limits.max,
    ai_max: limits.aiMax,
    login_max: limits.loginMax,
    fd_limit: fdLimit,
  });
  const server = createHttpServer({
    limits,
    flight: o.flight,
    origins: o.origins,
    log: o.log,
    routes: () => o.edges().flatMap((e) => e.routes),
    upgrades: () => o.edges().flatMap((e) => e.upgrades),
  });
  return { server, limits };
}

export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new UsageError(`--port: ${host}:${port} is already in use; pick another port or --port 0`)
          : e,
      ),
    );
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}
