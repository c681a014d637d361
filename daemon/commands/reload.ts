/**
 * `ogf-broker reload [--data-dir D]` (contract 17): asks the daemon of the data dir to read its config again
 * — the same as SIGHUP, but with an answer. Prints what it applied and what needs a restart (exit 0), or the
 * error that kept the old config in force (exit 2); no daemon running there is exit 2 too.
 */
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import { dataDirPaths, resolveDataDir, runningDaemon } from '../datadir/index.js';
import { askRunningDaemon } from '../owner-terminal/index.js';

export async function runReload(argv: string[]): Promise<number> {
  const p = parseFlags('reload', argv, { 'data-dir': { type: 'string' } });
  const dataDir = resolveDataDir(stringFlag(p, 'data-dir'));
  const running = runningDaemon(dataDirPaths(dataDir).daemonJson);
  if (running === undefined)
    throw new UsageError(`reload: no daemon runs for the data dir ${dataDir} (ogf-broker start starts one)`);
  const m = await askRunningDaemon(dataDir, process.env, { type: 'reload' });
  if (m?.type === 'reply' && !m.ok) throw new UsageError(`reload: ${m.error.message}`);
  if (m?.type !== 'reload')
    throw new UsageError(`reload: the running daemon answered ${m?.type ?? 'nothing'}`);
  if (!m.ok) throw new UsageError(`reload: the daemon (pid ${m.pid}) kept its config: ${m.error}`);
  const changed = m.changed.length === 0 ? 'nothing that reloads changed' : `applied ${m.changed.join(', ')}`;
  process.stdout.write(`reloaded the config in the daemon (pid ${m.pid}): ${changed}\n`);
  if (m.restart_needed.length > 0)
    process.stdout.write(
      `changed but applied only by a restart: ${m.restart_needed.join(', ')} (the daemon still uses the old values)\n`,
    );
  return 0;
}
