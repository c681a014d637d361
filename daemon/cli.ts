#!/usr/bin/env node
/** `ogf-broker`: argv → subcommand (one file each in commands/); nothing else (contract 1.1). */
// Subcommands are imported on demand: a terminal `approve` need not load the MCP SDK or SQLite.
import { BrokerError, UsageError } from './base/index.js';

const USAGE = `usage: ogf-broker <command> [flags]
  start [--data-dir D] [--host H] [--port P] [--config F]   run the daemon in the foreground
  mcp-stdio [--data-dir D]                                   MCP server on stdin/stdout
  status [--data-dir D]                                      is a daemon running? URLs and counts
  list [--all] | approve ID | deny ID [--note TEXT]          owner actions from a terminal
  reconcile ID --outcome delivered|not_delivered [--note TEXT]
  grant list [--all] | grant revoke ID                       the owner's grants (allow again, for a while)
  grant add --command C --client NAME|* --ttl-s N [--args JSON | --when EXPR] [--uses N] [--note T] [--node NAME|*]
  policy test [--data-dir D] [--config F] [--limit N]       the config's rules against the recorded history
  token owner | token mcp [--client NAME] [--rotate]         print the owner login URL / an MCP token
  audit key | audit verify [--data-dir D | --file EXPORT] [--pub FILE] [--key FILE]…
  audit export [--since T] [--until T] [--command ID] [--format jsonl|csv]   the tamper-evident record
  notify test [--channel ID]                                 send a test message through each notify channel
  doctor                                                     check data dir, port, config and the avatar app`;

async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'start':
      return (await import('./commands/start.js')).runStart(rest);
    case 'mcp-stdio':
      return (await import('./commands/mcp-stdio.js')).runMcpStdio(rest);
    case 'status':
      return (await import('./commands/status.js')).runStatus(rest);
    case 'list':
    case 'approve':
    case 'deny':
    case 'reconcile':
      return (await import('./commands/owner-actions.js')).runOwnerCommand(sub, rest);
    case 'grant':
      return (await import('./commands/grant.js')).runGrantCommand(rest);
    case 'token':
      return (await import('./commands/token.js')).runToken(rest);
    case 'policy':
      return (await import('./commands/policy.js')).runPolicy(rest);
    case 'notify':
      return (await import('./commands/notify.js')).runNotifyCommand(rest);
    case 'doctor':
      return (await import('./commands/doctor.js')).runDoctor(rest);
    case 'audit':
      // The walk's second thread starts while the command's modules load (audit-walk-thread.ts).
      if (rest[0] === 'verify') (await import('./commands/audit-walk-thread.js')).startWalkThread();
      return (await import('./commands/audit.js')).runAudit(rest);
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      throw new UsageError(
        `command must be one of start, mcp-stdio, status, list, approve, deny, reconcile, grant, policy, token, audit, notify, doctor; got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`,
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
