/**
 * `npm run avatar`: the reference OGF Bridge app (contracts.md 6). Port from `--port` or
 * `OGF_AVATAR_PORT` (default 7720). Prints one ready line with its URLs; logs each cue (never the
 * session UUID) as a JSON line on stderr. Stops cleanly on SIGINT/SIGTERM.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startAvatarServer } from './server.js';

const DEFAULT_PORT = 7720;

function portFrom(argv: string[], env: NodeJS.ProcessEnv): number {
  let values: { port?: string | undefined };
  try {
    values = parseArgs({ args: argv, options: { port: { type: 'string' } }, strict: true }).values;
  } catch (e) {
    throw new Error(`${(e as Error).message.split('\n')[0]} (accepted flags: --port)`);
  }
  const raw = values.port ?? env.OGF_AVATAR_PORT;
  const source = values.port !== undefined ? '--port' : 'OGF_AVATAR_PORT';
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new Error(`${source}: port must be an integer from 0 to 65535, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

async function main(): Promise<void> {
  let port: number;
  try {
    port = portFrom(process.argv.slice(2), process.env);
  } catch (e) {
    process.stderr.write(`ogf avatar app: ${(e as Error).message}\n`);
    process.exit(2);
  }
  const app = await startAvatarServer({
    port,
    webDir: join(import.meta.dirname, 'web'),
    onEvent: (event) => {
      if (event.type === 'cue' || event.type === 'refused') {
        process.stderr.write(
          `${JSON.stringify({ time: new Date().toISOString(), event: `bridge_${event.type}`, ...event, type: undefined })}\n`,
        );
      }
    },
  }).catch((e: NodeJS.ErrnoException) => {
    const why = e.code === 'EADDRINUSE' ? `port ${port} is in use (choose another with --port)` : e.message;
    process.stderr.write(`ogf avatar app: cannot start: ${why}\n`);
    process.exit(1);
  });
  process.stdout.write(`ogf avatar app ready: page ${app.pageUrl} bridge ${app.bridgeUrl}\n`);
  const stop = () => {
    void app.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
