/**
 * `ogf-broker audit key | verify | export` (contract 14), with or without a running daemon: broker.db is
 * opened read-only (WAL gives one consistent snapshot while the daemon writes), the shared PostgreSQL
 * (contract 16) in one read-only snapshot, an export file as it is.
 *
 * - `audit key [--data-dir D]`: prints audit.pub (created with the key pair when absent).
 * - `audit verify [--data-dir D | --file EXPORT] [--pub FILE] [--key FILE]…`: audit-verify.ts.
 * - `audit export [--data-dir D] [--since T] [--until T] [--command ID] [--format jsonl|csv]`: to stdout.
 */
import { type KeyObject, verify } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  auditKeyPaths,
  knownKeysOf,
  loadOrCreateAuditKey,
  publicKeyDer,
  readPublicKey,
  toCsv,
  toJsonl,
} from '../audit/index.js';
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import { type ChainEntry, type Checkpoint, checkpointPayload } from '../core/model/audit-chain.js';
import { openDataDir, resolveDataDir } from '../datadir/index.js';
import { type AuditRange, recordOfDataDir } from '../store/read.js';
import { auditVerify } from './audit-verify.js';

const SUBCOMMANDS = 'key, verify or export';

export async function runAudit(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'key':
      return auditKey(rest);
    case 'verify':
      return auditVerify(rest);
    case 'export':
      return auditExport(rest);
    default:
      throw new UsageError(
        `audit: the action must be ${SUBCOMMANDS}, got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`,
      );
  }
}

function auditKey(argv: string[]): number {
  const p = parseFlags('audit key', argv, { 'data-dir': { type: 'string' } });
  const paths = openDataDir(resolveDataDir(stringFlag(p, 'data-dir')));
  process.stdout.write(loadOrCreateAuditKey(paths.root).publicPem);
  return 0;
}

function isoFlag(p: ReturnType<typeof parseFlags>, name: string): string | undefined {
  const v = stringFlag(p, name);
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(t)) {
    throw new UsageError(
      `--${name} must be an ISO-8601 time such as 2026-11-30T10:00:00.000Z, got ${JSON.stringify(v)}`,
    );
  }
  return new Date(t).toISOString();
}

async function auditExport(argv: string[]): Promise<number> {
  const p = parseFlags('audit export', argv, {
    'data-dir': { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    command: { type: 'string' },
    format: { type: 'string' },
  });
  const format = stringFlag(p, 'format') ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') {
    throw new UsageError(`--format must be jsonl or csv, got ${JSON.stringify(format)}`);
  }
  const command = stringFlag(p, 'command');
  if (command !== undefined && !/^[A-Za-z0-9_-]{8,64}$/.test(command)) {
    throw new UsageError(
      `--command must be a pending_id (8 to 64 of A-Z a-z 0-9 _ -), got ${JSON.stringify(command)}`,
    );
  }
  const range: AuditRange = {};
  const since = isoFlag(p, 'since');
  const until = isoFlag(p, 'until');
  if (since !== undefined) range.since = since;
  if (until !== undefined) range.until = until;
  if (command !== undefined) range.commandIds = [command];
  const dataDir = resolveDataDir(stringFlag(p, 'data-dir'));
  // The data dir's store, decided once where its read port is opened (store/read.ts).
  const chain = await (await recordOfDataDir(dataDir)).chain(range);
  const nodes = chain.nodes ?? [];
  const entries: ChainEntry[] = [];
  for (const r of chain.rows) {
    if (r.entry === null || r.hash === null) continue;
    entries.push({ ...(JSON.parse(r.entry) as Omit<ChainEntry, 'hash'>), hash: r.hash });
  }
  if (format === 'csv') {
    process.stdout.write(toCsv(entries));
    return 0;
  }
  const pubFile = auditKeyPaths(dataDir).pub;
  const own = existsSync(pubFile) ? readPublicKey(pubFile) : undefined;
  process.stdout.write(toJsonl(entries, chain.checkpoints, signerKey(own, nodes), range));
  return 0;
}

/**
 * The key each exported checkpoint line names (base64 SPKI DER): this data dir's; on a shared database
 * (contract 16) the key of the node whose signature it is, found by trying this one's, then each node's.
 */
function signerKey(
  own: KeyObject | undefined,
  nodes: ReadonlyArray<{ name: string; key: string | null }>,
): string | undefined | ((cp: Checkpoint) => string | undefined) {
  if (nodes.length === 0) return own === undefined ? undefined : publicKeyDer(own);
  const keys = [...(own === undefined ? [] : [own]), ...knownKeysOf(nodes).map((n) => n.key)];
  return (cp) => {
    const payload = Buffer.from(checkpointPayload(cp));
    const sig = Buffer.from(cp.signature, 'base64');
    const k = keys.find((key) => {
      try {
        return verify(null, payload, key, sig);
      } catch {
        return false;
      }
    });
    const named = k ?? own;
    return named === undefined ? undefined : publicKeyDer(named);
  };
}
