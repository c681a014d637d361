/**
 * Owner actions from a terminal (contracts.md 1.1, 5): `list [--all]`, `approve ID`, `deny ID [--note TEXT]`,
 * `reconcile ID --outcome delivered|not_delivered [--note TEXT]`, each with `--data-dir D`. They talk to the
 * running daemon over the owner WebSocket with the owner token, exactly as the panel does
 * (../owner-terminal/), and print the same codes and messages (`AlreadyDecided: ...` on stderr, exit 1).
 * Bad flags exit 2 with one line naming the flag; no running daemon exits 1 with a clear message.
 */

import type { View } from '../../common/owner-messages.js';
import { escapeForTerminal, sayError, scanFlags, UsageError } from '../base/index.js';
import { KINDS } from '../kinds/index.js';
import {
  formatView,
  type OwnerClient,
  OwnerConnectError,
  showsNodes,
  withOwnerClient,
} from '../owner-terminal/index.js';

const ID_RE = /^[A-Za-z0-9_-]{8,64}$/;

interface Spec {
  /** Flags taking a value. */
  values: string[];
  /** Boolean flags. */
  bools: string[];
  /** Number of positional arguments (0 for list, 1 for the others). */
  positional: number;
}

const SPECS: Record<string, Spec> = {
  list: { values: ['--data-dir'], bools: ['--all'], positional: 0 },
  approve: { values: ['--data-dir'], bools: [], positional: 1 },
  deny: { values: ['--data-dir', '--note'], bools: [], positional: 1 },
  reconcile: { values: ['--data-dir', '--note', '--outcome'], bools: [], positional: 1 },
  // Contract 20: take a succeeded file write back.
  revert: { values: ['--data-dir'], bools: [], positional: 1 },
};

interface Parsed {
  flags: Map<string, string | true>;
  args: string[];
}

function accepted(sub: string, spec: Spec): string {
  const flags = [
    ...spec.bools,
    ...spec.values.map((v) => `${v} ${v.slice(2).toUpperCase().replace('-', '_')}`),
  ];
  return `${sub} accepts ${flags.join(', ')}`;
}

/** Parses `argv` against the subcommand's flags; throws UsageError naming the offending flag. */
export function parseOwnerArgs(sub: string, argv: readonly string[]): Parsed {
  const spec = SPECS[sub];
  if (spec === undefined)
    throw new UsageError(`${sub}: not an owner command (list, approve, deny, reconcile, revert)`);
  const { flags, args } = scanFlags(argv, spec, (name) => `${name}: unknown flag (${accepted(sub, spec)})`);
  if (args.length > spec.positional) {
    throw new UsageError(
      `${JSON.stringify(args[spec.positional])}: unexpected argument (${sub} takes ${spec.positional === 0 ? 'no ID' : 'one ID'})`,
    );
  }
  if (spec.positional === 1) {
    const id = args[0];
    if (id === undefined)
      throw new UsageError(`ID: ${sub} needs the command's pending_id (see ogf-broker list)`);
    if (!ID_RE.test(id)) {
      throw new UsageError(
        `ID: must be a pending_id (8 to 64 letters, digits, _ or -), got ${JSON.stringify(id)}`,
      );
    }
  }
  if (sub === 'reconcile') {
    const outcome = flags.get('--outcome');
    if (outcome === undefined) throw new UsageError('--outcome: required, one of delivered, not_delivered');
    if (outcome !== 'delivered' && outcome !== 'not_delivered') {
      throw new UsageError(
        `--outcome: must be one of delivered, not_delivered, got ${JSON.stringify(outcome)}`,
      );
    }
  }
  const note = flags.get('--note');
  if (typeof note === 'string' && note.length > 2000) {
    throw new UsageError(`--note: must be at most 2000 characters, got ${note.length}`);
  }
  return { flags, args };
}

/**
 * Contract 20: `revert ID` queues owner `owner`'s command writing the file back, approved by this command —
 * unless it needs a passkey, which the terminal cannot give: then it waits for the owner in the panel.
 */
async function revert(client: OwnerClient, id: string): Promise<number> {
  const answer = await client.request({ type: 'revert', id });
  if (answer.type === 'reply' && !answer.ok) {
    sayError(escapeForTerminal(`${answer.error.code}: ${answer.error.message}`));
    return 1;
  }
  if (answer.type !== 'revert')
    throw new OwnerConnectError(`unexpected ${answer.type} frame from the daemon`);
  process.stdout.write(`revert of ${id} queued as ${answer.id}\n`);
  return 0;
}

async function act(client: OwnerClient, sub: string, id: string, flags: Parsed['flags']): Promise<number> {
  if (sub === 'revert') return revert(client, id);
  const current: View | undefined = client.snapshot.find((v) => v.id === id);
  // An id absent from the snapshot is unknown (NotFound) or long decided (AlreadyDecided); the broker
  // checks both before the version, so version 1 gets the right answer either way.
  const version = current?.version ?? 1;
  const note = flags.get('--note');
  const withNote = typeof note === 'string' ? { note } : {};
  const reply =
    sub === 'approve'
      ? await client.request({ type: 'approve', id, version })
      : sub === 'deny'
        ? await client.request({ type: 'deny', id, version, ...withNote })
        : await client.request({
            type: 'reconcile',
            id,
            outcome: flags.get('--outcome') as 'delivered' | 'not_delivered',
            ...withNote,
          });
  if (reply.type !== 'reply') throw new OwnerConnectError(`unexpected ${reply.type} frame from the daemon`);
  if (!reply.ok) {
    // The daemon's words, but a message may quote stored text: printed as inert as the list (contract 5).
    sayError(escapeForTerminal(`${reply.error.code}: ${reply.error.message}`));
    return 1;
  }
  const done = { approve: 'approved', deny: 'denied', reconcile: 'reconciled' }[sub as 'approve'];
  process.stdout.write(`${done} ${id}${current ? ` (${escapeForTerminal(current.command)})` : ''}\n`);
  return 0;
}

/** Runs an owner subcommand; returns the exit code (0 ok, 1 refused or no daemon, 2 bad usage). */
export async function runOwnerCommand(
  sub: string,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseOwnerArgs(sub, argv);
  } catch (e) {
    if (e instanceof UsageError) {
      sayError(e.message);
      return 2;
    }
    throw e;
  }
  return withOwnerClient(parsed.flags, env, sub, async (client) => {
    if (sub === 'list') {
      const all = parsed.flags.get('--all') === true;
      const views = all ? client.snapshot : client.snapshot.filter((v) => v.status === 'PENDING');
      if (views.length === 0) process.stdout.write(all ? 'no commands\n' : 'nothing waits for a decision\n');
      // Contract 16: each command's node, once the listing holds more than one node's.
      const node = showsNodes(views);
      for (const v of views) process.stdout.write(`${formatView(v, KINDS, { node })}\n`);
      return 0;
    }
    return act(client, sub, parsed.args[0]!, parsed.flags);
  });
}
