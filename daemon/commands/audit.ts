/**
 * `ogf-broker audit key | verify | export` (contract 14), with or without a running daemon: broker.db is
 * opened read-only (WAL gives one consistent snapshot while the daemon writes), an export file is read as
 * it is.
 *
 * - `audit key [--data-dir D]`: prints audit.pub (created with the key pair when absent).
 * - `audit verify [--data-dir D | --file EXPORT] [--pub FILE]`: `ok: N entries, M checkpoints, K passkey
 *   approvals verified` (exit 0), or the first bad seq and why (exit 1).
 * - `audit export [--data-dir D] [--since T] [--until T] [--command ID] [--format jsonl|csv]`: to stdout.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  auditKeyPaths,
  type ChainInput,
  ChainWalk,
  chainFromExport,
  chainFromRows,
  loadOrCreateAuditKey,
  publicKeyDer,
  readPublicKey,
  toCsv,
  toJsonl,
  type VerifyResult,
  verifyChain,
  verifyPasskeyApprovals,
  type Walked,
  walkExport,
} from '../audit/index.js';
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import type { ChainEntry } from '../core/index.js';
import { openDataDir, resolveDataDir } from '../datadir/index.js';
import { type AuditRange, readAuditChain, walkAuditChain } from '../store/sqlite/index.js';

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

/** broker.db's chain, or a clear error (exit 2) when there is none to read. */
function storedChain(dataDir: string, range: AuditRange = {}) {
  const db = join(dataDir, 'broker.db');
  const chain = readAuditChain(db, range);
  if (chain === undefined) {
    throw new UsageError(
      `--data-dir: ${dataDir} holds no readable broker.db with an audit chain (start this version's daemon there once, or pass --file EXPORT)`,
    );
  }
  return chain;
}

async function auditVerify(argv: string[]): Promise<number> {
  const p = parseFlags('audit verify', argv, {
    'data-dir': { type: 'string' },
    file: { type: 'string' },
    pub: { type: 'string' },
  });
  const file = stringFlag(p, 'file');
  const pub = stringFlag(p, 'pub');
  if (file !== undefined && stringFlag(p, 'data-dir') !== undefined) {
    throw new UsageError('audit verify: give --data-dir D or --file EXPORT, not both');
  }
  const dataDir = file === undefined ? resolveDataDir(stringFlag(p, 'data-dir')) : undefined;
  // The key checkpoints must verify under: --pub, else the data dir's audit.pub, else (an export) each one's own.
  const keyOf = (): KeyObject | undefined => {
    if (pub !== undefined) return readPublicKey(pub);
    const own = dataDir === undefined ? undefined : auditKeyPaths(dataDir).pub;
    return own !== undefined && existsSync(own) ? readPublicKey(own) : undefined;
  };
  let text: string | undefined;
  let walked: Walked | undefined;
  if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError(`--file: cannot read ${file}: ${(e as Error).message}`);
    }
    walked = walkExport(text, keyOf());
  } else {
    // One streaming pass first (walk.ts); a record it finds anything off in is read whole below.
    const walk = new ChainWalk();
    const read = walkAuditChain(join(dataDir!, 'broker.db'), (entry, hash) => walk.row(entry, hash));
    if (read !== undefined && !read.stopped) walked = walk.finish(read.checkpoints, keyOf());
  }
  let r: VerifyResult;
  let kept: ChainInput;
  if (walked !== undefined) {
    r = { ok: true, entries: walked.entries, checkpoints: walked.checkpoints, passkeys: 0 };
    kept = walked.kept;
  } else {
    // The whole input, for the first bad seq and why (verify.ts).
    let early: VerifyResult | undefined;
    if (text !== undefined) {
      const read = chainFromExport(text);
      kept = read.input;
      if (read.bad !== undefined) early = { ok: false, bad: read.bad };
    } else {
      const chain = storedChain(dataDir!);
      kept = chainFromRows(chain.rows, chain.checkpoints);
    }
    const key = keyOf();
    if (key !== undefined) kept.publicKey = key;
    r = first(early, verifyChain(kept));
  }
  const checkpoints = walked?.checkpoints ?? kept.checkpoints.length;
  if (file !== undefined && pub === undefined && checkpoints > 0) {
    process.stderr.write(
      'audit verify: checkpoints checked against the key the export names; pass --pub FILE (your copy of `audit key`) to check them against yours\n',
    );
  }
  if (r.ok) {
    // Contract 14: every passkey assertion kept with an approval, checked offline (contract 13.3).
    const checked = await verifyPasskeyApprovals(kept);
    r = checked.ok ? { ...r, passkeys: checked.count } : checked;
  }
  if (r.ok) {
    process.stdout.write(
      `ok: ${r.entries} entries, ${r.checkpoints} checkpoints, ${r.passkeys} passkey approvals verified\n`,
    );
    return 0;
  }
  process.stdout.write(`seq ${r.bad.seq}: ${r.bad.reason} (${r.bad.detail})\n`);
  return 1;
}

/** The failure with the lower seq of two results, else the second. */
function first(a: VerifyResult | undefined, b: VerifyResult): VerifyResult {
  if (a === undefined || a.ok) return b;
  if (b.ok || a.bad.seq <= b.bad.seq) return a;
  return b;
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

function auditExport(argv: string[]): number {
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
  const chain = storedChain(dataDir, range);
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
  const key = existsSync(pubFile) ? publicKeyDer(readPublicKey(pubFile)) : undefined;
  process.stdout.write(toJsonl(entries, chain.checkpoints, key, range));
  return 0;
}
