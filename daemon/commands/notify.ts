/**
 * `ogf-broker notify test [--channel ID]` (contracts.md 1.1, 13.1): sends a test message through each
 * notification channel of the config (or the one named), once, from this process and with its environment,
 * and prints one line per channel. Exit 0 only when every channel accepted it (2xx / SMTP 250), 1 otherwise;
 * bad flags, an unknown channel or no channel at all exit 2. The link in the message points at public_url,
 * else at the running daemon, else at where it would listen.
 */
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import { loadConfig } from '../config/index.js';
import { dataDirPaths, runningDaemon } from '../datadir/index.js';
import { testChannels } from '../notify/index.js';
import { askRunningDaemon } from '../owner-terminal/index.js';

export async function runNotifyCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'test')
    throw new UsageError(
      `notify: the subcommand must be test, got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`,
    );
  const p = parseFlags('notify test', rest, {
    channel: { type: 'string' },
    'data-dir': { type: 'string' },
    config: { type: 'string' },
  });
  const config = loadConfig({ dataDir: stringFlag(p, 'data-dir'), config: stringFlag(p, 'config') });
  const wanted = stringFlag(p, 'channel');
  const ids = config.notify.map((c) => c.id);
  if (ids.length === 0)
    throw new UsageError(
      `notify test: the config has no notify channels (${config.configFile ?? 'no config file'})`,
    );
  if (wanted !== undefined && !ids.includes(wanted))
    throw new UsageError(`--channel: must be one of ${ids.join(', ')}, got ${JSON.stringify(wanted)}`);
  const channels = config.notify.filter((c) => wanted === undefined || c.id === wanted);
  const running = runningDaemon(dataDirPaths(config.dataDir).daemonJson);
  let results: Array<{ id: string; kind: string; ok: boolean; status?: number; error?: string }>;
  if (running !== undefined) {
    // Contract 17: the running daemon sends through its own channels, with its own environment.
    const m = await askRunningDaemon(config.dataDir, process.env, {
      type: 'notify_test',
      ...(wanted === undefined ? {} : { channel: wanted }),
    });
    if (m?.type === 'reply' && !m.ok) throw new UsageError(`notify test: ${m.error.message}`);
    if (m?.type !== 'notify_test')
      throw new UsageError(`notify test: the running daemon answered ${m?.type}`);
    process.stdout.write(`checked in the running daemon, pid ${m.pid}\n`);
    results = m.results;
  } else {
    const base = config.public_url ?? `http://${config.host}:${config.port}`;
    results = (await testChannels(channels, process.env, base)).map(({ id, kind, attempt: a }) => ({
      id,
      kind,
      ok: a.ok,
      ...(a.status === undefined ? {} : { status: a.status }),
      ...('error' in a && a.error !== undefined ? { error: a.error } : {}),
    }));
  }
  for (const a of results) {
    const how = a.ok
      ? `accepted (${a.kind === 'email' ? 'SMTP' : 'HTTP'} ${a.status})`
      : `not accepted (${[a.status === undefined ? undefined : `status ${a.status}`, a.error].filter(Boolean).join(', ')})`;
    process.stdout.write(`${a.ok ? 'ok  ' : 'FAIL'} ${a.id} (${a.kind}): ${how}\n`);
  }
  return results.every((r) => r.ok) ? 0 : 1;
}
