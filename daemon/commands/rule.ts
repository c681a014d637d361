/**
 * `ogf-broker rule list`, `rule add --when EXPR --decision allow|deny|ask [--note T] [--id ID]`, `rule remove
 * ID`, `rule disable ID`, each with `--data-dir D` (contract 18): the owners' rules through the owner
 * WebSocket, acting as owner `owner` like the other terminal commands — the same frames the panel's Rules
 * area sends, so the daemon checks them the same way. `list` prints one line per rule: id, source,
 * decision, enabled, expression. A refusal (`BadMessage: when …`, `NotFound: …`) goes to stderr, exit 2
 * for a bad rule and 1 otherwise; bad flags exit 2 naming the flag.
 */
import type { RuleInfo, ServerMessage } from '../../common/owner-messages.js';
import { escapeForTerminal, sayError, scanFlags, UsageError } from '../base/index.js';
import { OwnerConnectError, withOwnerClient } from '../owner-terminal/index.js';

const SPECS: Record<string, { values: string[]; positional: number }> = {
  list: { values: ['--data-dir'], positional: 0 },
  add: { values: ['--data-dir', '--when', '--decision', '--note', '--id'], positional: 0 },
  remove: { values: ['--data-dir'], positional: 1 },
  disable: { values: ['--data-dir'], positional: 1 },
};

const ID = /^[a-z][a-z0-9-]{0,31}$/;

type Parsed = { flags: Map<string, string | true>; args: string[] };

function parse(action: string, argv: readonly string[]): Parsed {
  const spec = SPECS[action];
  if (spec === undefined) {
    throw new UsageError(
      `rule: must be followed by list, add, remove or disable, got ${action === '' ? 'nothing' : JSON.stringify(action)}`,
    );
  }
  const { flags, args } = scanFlags(
    argv,
    { values: spec.values, bools: [] },
    (name) => `${name}: unknown flag (rule ${action} accepts ${spec.values.join(', ')})`,
  );
  if (args.length > spec.positional)
    throw new UsageError(`${JSON.stringify(args[spec.positional])}: unexpected argument`);
  if (spec.positional === 1 && !ID.test(args[0] ?? '')) {
    throw new UsageError(
      `ID: rule ${action} needs a rule id (^[a-z][a-z0-9-]{0,31}$), got ${args[0] === undefined ? 'nothing' : JSON.stringify(args[0])}`,
    );
  }
  return { flags, args };
}

/** The `rule_add` frame from `add`'s flags; throws UsageError naming the flag. */
function addRequest(flags: Map<string, string | true>) {
  const when = flags.get('--when');
  if (typeof when !== 'string' || when === '') throw new UsageError('--when: required, a CEL expression');
  const decision = flags.get('--decision');
  if (decision !== 'allow' && decision !== 'deny' && decision !== 'ask') {
    throw new UsageError(
      `--decision: must be allow, deny or ask, got ${decision === undefined ? 'nothing' : JSON.stringify(decision)}`,
    );
  }
  const rule: { id?: string; when: string; decision: 'allow' | 'deny' | 'ask'; note?: string } = {
    when,
    decision,
  };
  const note = flags.get('--note');
  if (typeof note === 'string') rule.note = note;
  const id = flags.get('--id');
  if (typeof id === 'string') {
    if (!ID.test(id))
      throw new UsageError(`--id: must match ^[a-z][a-z0-9-]{0,31}$, got ${JSON.stringify(id)}`);
    rule.id = id;
  }
  return { type: 'rule_add' as const, rule };
}

/** One line of `rule list`: id, source, decision, enabled, expression (then who made it and its count). */
export function formatRule(r: RuleInfo): string {
  const made = r.created_by === undefined ? '' : ` by ${r.created_by} at ${r.created_at}`;
  const approvals = r.approvals === undefined ? '' : ` (${r.approvals} approvals)`;
  const enabled = r.enabled ? 'enabled' : 'disabled';
  return escapeForTerminal(
    `${r.id}  ${r.source}  ${r.decision}${approvals}  ${enabled}  ${r.when}  — decided ${r.decided}${made}`,
  );
}

/** The rule of an answer, or the exit code of a refusal (said on stderr). */
function answered(reply: ServerMessage): RuleInfo | number | undefined {
  if (reply.type === 'rule_add' || reply.type === 'rule_update') return reply.rule;
  if (reply.type === 'rule_remove') return undefined;
  if (reply.type !== 'reply' || reply.ok)
    throw new OwnerConnectError(`unexpected ${reply.type} frame from the daemon`);
  sayError(escapeForTerminal(`${reply.error.code}: ${reply.error.message}`));
  return reply.error.code === 'BadMessage' ? 2 : 1;
}

/** Runs `rule <action> ...`; returns the exit code (0 ok, 1 refused or no daemon, 2 bad usage or rule). */
export async function runRuleCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [action = '', ...rest] = argv;
  let parsed: Parsed;
  let add: ReturnType<typeof addRequest> | undefined;
  try {
    parsed = parse(action, rest);
    if (action === 'add') add = addRequest(parsed.flags);
  } catch (e) {
    if (e instanceof UsageError) {
      sayError(e.message);
      return 2;
    }
    throw e;
  }
  return withOwnerClient(parsed.flags, env, `rule ${action}`, async (client) => {
    if (action === 'list') {
      const reply = await client.request({ type: 'rules' });
      if (reply.type !== 'rules') {
        const code = answered(reply);
        return typeof code === 'number' ? code : 1;
      }
      if (reply.rules.length === 0) process.stdout.write('no rules\n');
      for (const r of reply.rules) process.stdout.write(`${formatRule(r)}\n`);
      return 0;
    }
    const id = parsed.args[0]!;
    const reply = await client.request(
      add ??
        (action === 'remove' ? { type: 'rule_remove', id } : { type: 'rule_update', id, enabled: false }),
    );
    const r = answered(reply);
    if (typeof r === 'number') return r;
    process.stdout.write(
      r === undefined ? `removed ${id}\n` : `${formatRule(r)}\n${add === undefined ? '' : `${r.id}\n`}`,
    );
    return 0;
  });
}
