/**
 * `ogf-broker policy test [--data-dir D] [--config F] [--limit N]` (contracts.md 1.1, 11): every rule of a
 * config (by default the daemon's: `<data-dir>/config.json`) against the recorded history — one line per
 * rule, `rule ID: matched M of N (K would be decided otherwise)`, then one line per command whose decision
 * the rules (first true decides) would change. Reads broker.db read-only, or the shared PostgreSQL the data
 * dir's daemon uses (contract 16), in this process: a running daemon is never held up. Exit 0, or 2 for a
 * bad config or flag, or a database it cannot read.
 */
import { escapeForTerminal as esc, parseFlags, stringFlag, systemClock, UsageError } from '../base/index.js';
import { loadConfig } from '../config/index.js';
import { KINDS } from '../kinds/index.js';
import { compileRules, POLICY_TEST_DEFAULT, POLICY_TEST_MAX, RuleBook, testBook } from '../rules/index.js';
import { recordOf } from '../store/index.js';

const DOES = { allow: 'allow', deny: 'deny', ask: 'ask the owners about' } as const;

export async function runPolicy(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action !== 'test') {
    throw new UsageError(
      `policy: must be followed by test, got ${action === undefined ? 'nothing' : JSON.stringify(action)}`,
    );
  }
  const p = parseFlags('policy test', rest, {
    'data-dir': { type: 'string' },
    config: { type: 'string' },
    limit: { type: 'string' },
  });
  const rawLimit = stringFlag(p, 'limit') ?? String(POLICY_TEST_DEFAULT);
  if (!/^\d{1,5}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > POLICY_TEST_MAX) {
    throw new UsageError(
      `--limit: must be an integer from 1 to ${POLICY_TEST_MAX}, got ${JSON.stringify(rawLimit)}`,
    );
  }
  const config = loadConfig({ dataDir: stringFlag(p, 'data-dir'), config: stringFlag(p, 'config') });
  const compiled = compileRules(config.rules);
  if (!compiled.ok) throw new UsageError(`config: ${compiled.why}`);
  const quiet = { log: () => {} };
  const book = new RuleBook(compiled.rules, quiet, systemClock);
  // Contract 16 (v4): the history of the store the data dir's daemon uses — its PostgreSQL when it uses one
  // (or exit 2 saying which variable to set), never an empty broker.db in its place.
  const history = await recordOf(config).newestCommands(Number(rawLimit));
  // The history is read already (this process is not the daemon); testBook pages through it as through a port.
  const read = (limit: number, before?: string) => {
    const from = before === undefined ? 0 : history.findIndex((c) => c.id === before) + 1;
    return history.slice(from, from + limit);
  };
  const report = await testBook(book, KINDS, read, history.length);
  const out: string[] = [];
  if (book.count === 0) out.push(`no rules in ${config.configFile ?? 'the config'}`);
  for (const r of report.rules) {
    out.push(
      `rule ${r.id}: matched ${r.matched} of ${report.of} (${r.otherwise} would be decided otherwise)`,
    );
  }
  for (const { command: c, rule, decision } of report.changed) {
    const by = 'decided_by' in c.phase ? ` by ${c.phase.decided_by}` : '';
    out.push(
      esc(
        `${c.id}  ${c.created_at}  ${c.command}  client ${c.client}: was ${c.phase.state}${by}; rule ${rule} would ${DOES[decision as keyof typeof DOES]} it`,
      ),
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}
