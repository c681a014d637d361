/**
 * The daemon's HTTP server listening on its host and port (contract 1.1: `--port 0` picks a free port): the
 * port it got, or a one-line UsageError (exit 2) when the port is taken.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../base/index.js';

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
