#!/usr/bin/env node
/** `ogf-broker`: argv → subcommand (one file each in commands/); nothing else (contract 1.1). */
// Subcommands are imported on demand: a terminal `approve` need not load the MCP SDK or SQLite.
import { BrokerError, sayError, UsageError, VERSION } from './base/index.js';
import { COMMANDS, overview } from './commands/usage.js';

async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  // Contract 17: --version, help, and `<command> --help` print to stdout and exit 0, before any flag check.
  if (sub === '--version' || sub === '-V' || sub === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    const topic = sub === 'help' ? rest[0] : undefined;
    const usage = topic === undefined ? undefined : COMMANDS[topic];
    if (topic !== undefined && usage === undefined)
      throw new UsageError(`help: no command ${JSON.stringify(topic)}; ogf-broker help lists them`);
    process.stdout.write(`${usage ?? overview()}\n`);
    return 0;
  }
  if (sub !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    const usage = COMMANDS[sub];
    if (usage !== undefined) {
      process.stdout.write(`${usage}\n`);
      return 0;
    }
  }
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
    case 'revert':
      return (await import('./commands/owner-actions.js')).runOwnerCommand(sub, rest);
    case 'grant':
      return (await import('./commands/grant.js')).runGrantCommand(rest);
    case 'rule':
      return (await import('./commands/rule.js')).runRuleCommand(rest);
    case 'token':
      return (await import('./commands/token.js')).runToken(rest);
    case 'policy':
      return (await import('./commands/policy.js')).runPolicy(rest);
    case 'notify':
      return (await import('./commands/notify.js')).runNotifyCommand(rest);
    case 'doctor':
      return (await import('./commands/doctor.js')).runDoctor(rest);
    case 'audit':
      // The walk's second thread starts while the command's modules load (audit/walk-thread.ts).
      if (rest[0] === 'verify') (await import('./audit/walk-thread.js')).startWalkThread();
      return (await import('./commands/audit.js')).runAudit(rest);
    case 'reload':
      return (await import('./commands/reload.js')).runReload(rest);
    case 'init':
      return (await import('./commands/init.js')).runInit(rest);
    case 'backup':
      return (await import('./commands/backup.js')).runBackup(rest);
    case 'restore':
      return (await import('./commands/restore.js')).runRestore(rest);
    case 'service':
      return (await import('./commands/service.js')).runService(rest);
    default:
      throw new UsageError(
        `command must be one of start, mcp-stdio, status, list, approve, deny, reconcile, revert, grant, rule, policy, token, audit, notify, doctor, reload, init, backup, restore, service; got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`,
      );
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      sayError(e.message);
      process.exitCode = 2;
    } else if (e instanceof BrokerError) {
      sayError(`${e.code}: ${e.message}`);
      process.exitCode = 1;
    } else {
      sayError((e as Error).stack ?? String(e));
      process.exitCode = 1;
    }
  },
);
