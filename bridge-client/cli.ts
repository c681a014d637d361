#!/usr/bin/env node
/**
 * `ogf-bridge-client deliver --session-file PATH` (contracts.md 4): reads the one-time session file,
 * delivers its cue over `ogf-bridge/1`, prints exactly one JSON line and exits 0 (delivered),
 * 2 (not delivered, certainly) or 3 (unknown). The session UUID never reaches stdout, stderr or argv.
 */
import { readFileSync } from 'node:fs';
import type { DeliverLine } from '../common/ogf-bridge.js';
import { deliverCue, exitCodeFor, notDelivered } from './deliver.js';
import { readSessionFile } from './session-reader.js';

const USAGE = 'usage: ogf-bridge-client deliver --session-file PATH';

function version(): string {
  // dist/bridge-client/cli.js and bridge-client/cli.ts both sit one or two levels below package.json.
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'ogf-broker' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

/** Parses `deliver --session-file PATH`; returns the path or a usage error. */
export function parseArgs(argv: string[]): { path: string } | { error: string } {
  if (argv[0] !== 'deliver')
    return { error: `unknown subcommand ${JSON.stringify(argv[0] ?? '')}; ${USAGE}` };
  let path: string | undefined;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--session-file' && i + 1 < argv.length) path = argv[++i];
    else if (a.startsWith('--session-file=')) path = a.slice('--session-file='.length);
    else return { error: `unknown argument ${JSON.stringify(a)}; ${USAGE}` };
  }
  if (!path) return { error: `--session-file must name a file; ${USAGE}` };
  return { path };
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if ('error' in args) {
    process.stderr.write(`ogf-bridge-client: ${args.error}\n`);
    return 64;
  }
  const read = readSessionFile(args.path);
  let line: DeliverLine;
  if (!read.ok) line = notDelivered(read.code, read.detail);
  else line = await deliverCue(read.file, { client: `ogf-broker/${version()}` });
  process.stdout.write(`${JSON.stringify(line)}\n`);
  return exitCodeFor(line);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Unreachable by design (nothing above rejects); still never leave without a line.
    process.stdout.write(
      `${JSON.stringify({ outcome: 'unknown', code: 'DeliveryUnconfirmed', detail: `internal error: ${(err as Error)?.name}` })}\n`,
    );
    process.exitCode = 3;
  },
);
