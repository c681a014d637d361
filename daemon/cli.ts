#!/usr/bin/env node
/** `ogf-broker`: argv → subcommand; nothing else (contract 1.1). */
import { runStart } from './commands/start.js';
import { runStatus } from './commands/status.js';
import { runToken } from './commands/token.js';
import { runDoctor } from './doctor.js';
import { BrokerError, UsageError } from './errors.js';
import { runMcpStdio } from './mcp/stdio.js';
import { runOwnerCommand } from './owner/terminal.js';

const USAGE = `usage: ogf-broker <command> [flags]
  start [--data-dir D] [--host H] [--port P] [--config F]   run the daemon in the foreground
  mcp-stdio [--data-dir D]                                   MCP server on stdin/stdout
  status [--data-dir D]                                      is a daemon running? URLs and counts
  list [--all] | approve ID | deny ID [--note TEXT]          owner actions from a terminal
  reconcile ID --outcome delivered|not_delivered [--note TEXT]
  token owner | token mcp [--client NAME] [--rotate]         print the owner login URL / an MCP token
  doctor                                                     check data dir, port, config and the avatar app`;

async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'start':
      return runStart(rest);
    case 'mcp-stdio':
      return runMcpStdio(rest);
    case 'status':
      return runStatus(rest);
    case 'list':
    case 'approve':
    case 'deny':
    case 'reconcile':
      return runOwnerCommand(sub, rest);
    case 'token':
      return runToken(rest);
    case 'doctor':
      return runDoctor(rest);
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      throw new UsageError(
        `command must be one of start, mcp-stdio, status, list, approve, deny, reconcile, token, doctor; got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`,
      );
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      process.stderr.write(`ogf-broker: ${e.message}\n`);
      process.exitCode = 2;
    } else if (e instanceof BrokerError) {
      process.stderr.write(`ogf-broker: ${e.code}: ${e.message}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`ogf-broker: ${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 1;
    }
  },
);
