/**
 * The baseline servers' body reader (bare-server.ts, bare-generations.ts): a request's whole body parsed as
 * JSON, undefined when empty. Of the bench, not the product: the baselines run nothing of the daemon's.
 */
import type { IncomingMessage } from 'node:http';

export function readJson(req: IncomingMessage): Promise<unknown> {
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
