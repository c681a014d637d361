/**
 * `ogf-broker grant list [--all]`, `grant add --command C --client NAME [--args JSON | --when EXPR] --ttl-s N
 * [--uses N] [--note T] [--node NAME|*]` (`--when`: contract 11, a CEL expression the daemon compiles;
 * `--node`: contract 16 v4, default the daemon's own node), `grant revoke ID` (contracts.md 1.1, 8), each with
 * `--data-dir D`: owner actions on grants through the owner WebSocket, acting as owner `owner` like the
 * other terminal commands. `add` prints the new grant's id as the last line. Bad flags exit 2 naming the flag; a refusal (`NotGrantable: ...`) goes
 * to stderr with exit 1, as `approve` does.
 */

import type { ServerMessage } from '../../common/owner-messages.js';
import { escapeForTerminal, sayError, scanFlags, UsageError } from '../base/index.js';
import { GRANT_TTL_MAX_S, GRANT_TTL_MIN_S, GRANT_USES_MAX } from '../core/index.js';
import { formatGrant, OwnerConnectError, withOwnerClient } from '../owner-terminal/index.js';

type Flags = Map<string, string | true>;

const SPECS: Record<string, { values: string[]; bools: string[]; positional: number }> = {
  list: { values: ['--data-dir'], bools: ['--all'], positional: 0 },
  add: {
    values: [
      '--data-dir',
      '--command',
      '--client',
      '--args',
      '--when',
      '--ttl-s',
      '--uses',
      '--note',
      '--node',
    ],
    bools: [],
    positional: 0,
  },
  revoke: { values: ['--data-dir'], bools: [], positional: 1 },
};

function parse(action: string, argv: readonly string[]): { flags: Flags; args: string[] } {
  const spec = SPECS[action];
  if (spec === undefined) {
    throw new UsageError(
      `grant: must be followed by list, add or revoke, got ${action === '' ? 'nothing' : JSON.stringify(action)}`,
    );
  }
  const { flags, args } = scanFlags(
    argv,
    spec,
    (name) => `${name}: unknown flag (grant ${action} accepts ${[...spec.bools, ...spec.values].join(', ')})`,
  );
  if (args.length > spec.positional) {
    throw new UsageError(`${JSON.stringify(args[spec.positional])}: unexpected argument`);
  }
  return { flags, args };
}

function intFlag(flags: Flags, name: string, min: number, max: number): number | undefined {
  const v = flags.get(name);
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d{1,10}$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(`${name}: must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  }
  return Number(v);
}

/** The `grant` frame `add` sends, from its flags; throws UsageError naming the flag. */
export function addRequest(flags: Flags) {
  const command = flags.get('--command');
  if (typeof command !== 'string' || command === '') {
    throw new UsageError('--command: required, a catalog command or an upstream tool (<upstream>__<tool>)');
  }
  const client = flags.get('--client');
  if (typeof client !== 'string') {
    throw new UsageError('--client: required, a client name or * for every client');
  }
  if (!/^(?:\*|[a-z0-9][a-z0-9_-]{0,31})$/.test(client)) {
    throw new UsageError(
      `--client: must be a client name (^[a-z0-9][a-z0-9_-]{0,31}$) or *, got ${JSON.stringify(client)}`,
    );
  }
  const ttl = intFlag(flags, '--ttl-s', GRANT_TTL_MIN_S, GRANT_TTL_MAX_S);
  if (ttl === undefined) {
    throw new UsageError(`--ttl-s: required, seconds from ${GRANT_TTL_MIN_S} to ${GRANT_TTL_MAX_S}`);
  }
  const req: {
    type: 'grant';
    command: string;
    client: string;
    ttl_s: number;
    args?: Record<string, unknown>;
    when?: string;
    uses?: number;
    note?: string;
    node?: string;
  } = { type: 'grant', command, client, ttl_s: ttl };
  const when = flags.get('--when');
  if (typeof when === 'string') {
    if (flags.has('--args')) {
      throw new UsageError(
        '--when: cannot be given with --args (a grant matches exact arguments, or an expression)',
      );
    }
    req.when = when;
  }
  const rawArgs = flags.get('--args');
  if (typeof rawArgs === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawArgs);
    } catch {
      throw new UsageError('--args: must be a JSON object of the exact arguments, got text that is not JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError('--args: must be a JSON object of the exact arguments (omit it to allow any)');
    }
    req.args = parsed as Record<string, unknown>;
  }
  const uses = intFlag(flags, '--uses', 1, GRANT_USES_MAX);
  if (uses !== undefined) req.uses = uses;
  const note = flags.get('--note');
  if (typeof note === 'string') req.note = note;
  // Contract 16 (v4): absent, the daemon names its own node (the grant approves this node's commands).
  const node = flags.get('--node');
  if (typeof node === 'string') {
    if (!/^(?:\*|[a-z][a-z0-9-]{0,31})$/.test(node)) {
      throw new UsageError(
        `--node: must be a node name (^[a-z][a-z0-9-]{0,31}$) or * for every node, got ${JSON.stringify(node)}`,
      );
    }
    req.node = node;
  }
  return req;
}

function refused(reply: ServerMessage): number | undefined {
  if (reply.type !== 'reply') throw new OwnerConnectError(`unexpected ${reply.type} frame from the daemon`);
  if (reply.ok) return undefined;
  sayError(escapeForTerminal(`${reply.error.code}: ${reply.error.message}`));
  return reply.error.code === 'BadMessage' ? 2 : 1;
}

/** Runs `grant <action> ...`; returns the exit code (0 ok, 1 refused or no daemon, 2 bad usage). */
export async function runGrantCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [action = '', ...rest] = argv;
  let parsed: ReturnType<typeof parse>;
  let add: ReturnType<typeof addRequest> | undefined;
  try {
    parsed = parse(action, rest);
    if (action === 'add') add = addRequest(parsed.flags);
    if (action === 'revoke' && !/^[A-Za-z0-9_-]{8,64}$/.test(parsed.args[0] ?? '')) {
      throw new UsageError(
        `ID: grant revoke needs a grant id (8 to 64 of A-Z a-z 0-9 _ -), got ${parsed.args[0] === undefined ? 'nothing' : JSON.stringify(parsed.args[0])}`,
      );
    }
  } catch (e) {
    if (e instanceof UsageError) {
      sayError(e.message);
      return 2;
    }
    throw e;
  }
  return withOwnerClient(parsed.flags, env, `grant ${action}`, async (client) => {
    const now = Date.now();
    if (action === 'list') {
      const all = parsed.flags.get('--all') === true;
      const reply = await client.request({ type: 'grants', all });
      if (reply.type !== 'grants')
        throw new OwnerConnectError(`unexpected ${reply.type} frame from the daemon`);
      if (reply.grants.length === 0) process.stdout.write(all ? 'no grants\n' : 'no live grants\n');
      for (const g of reply.grants) process.stdout.write(`${formatGrant(g, now)}\n`);
      return 0;
    }
    if (add !== undefined) {
      const reply = await client.request(add);
      const code = refused(reply);
      if (code !== undefined) return code;
      const grant = reply.type === 'reply' && reply.ok ? reply.grant : undefined;
      if (grant === undefined) throw new OwnerConnectError('the daemon did not return the new grant');
      process.stdout.write(`${formatGrant(grant, now)}\n${grant.id}\n`);
      return 0;
    }
    const id = parsed.args[0]!;
    const reply = await client.request({ type: 'revoke', grant_id: id });
    const code = refused(reply);
    if (code !== undefined) return code;
    process.stdout.write(`revoked ${id}\n`);
    return 0;
  });
}
