/**
 * `ogf-broker audit verify [--data-dir D | --file EXPORT] [--pub FILE] [--key FILE]…` (contracts 14, 16),
 * with or without a running daemon: the data dir's broker.db (opened read-only), or — when the config names
 * a shared PostgreSQL — the chain in that database, or an export file. `ok: N entries, M checkpoints, K
 * passkey approvals verified` (exit 0), or the first bad seq and why (exit 1). **(v4)** On a data dir or the
 * database, a chain found whole is then checked against the history (audit/history-stored.ts): `mismatch:
 * <command id>: <field>` lines, exit 1. The walk and the checks are audit/'s; which store is read, the read
 * port's (store/read.ts); this file parses the flags and prints.
 *
 * Trust: a checkpoint must verify under `--pub` (else the data dir's audit.pub) or a `--key` (another
 * node's audit.pub). On PostgreSQL every node signs with its own key and publishes it in `nodes`: a
 * checkpoint only such a key verifies is accepted and named on a line of its own (pin it with `--key`); one
 * no known key verifies fails at its seq.
 *
 * Start-up counts here (bench row 15 times this against sha256sum): on broker.db nothing but the walk,
 * broker.db's reader and the chain's hashing are loaded; the config only when one may name a database.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import {
  auditKeyPaths,
  type ChainInput,
  chainFromExport,
  chainFromRows,
  type ExportBytes,
  exportFile,
  finishWalk,
  type HistorySource,
  historyLines,
  knownKeysOf,
  readPublicKey,
  type UnpinnedSigner,
  type VerifyResult,
  verifyChain,
  verifyPasskeyApprovals,
  type Walked,
  walkFile,
  walkRecord,
} from '../audit/index.js';
import {
  escapeForTerminal,
  parseFlags,
  sayError,
  stringFlag,
  stringsFlag,
  UsageError,
} from '../base/index.js';
import { resolveDataDir } from '../datadir/index.js';
import { recordOfDataDir } from '../store/read.js';

export async function auditVerify(argv: string[]): Promise<number> {
  const p = parseFlags('audit verify', argv, {
    'data-dir': { type: 'string' },
    file: { type: 'string' },
    pub: { type: 'string' },
    key: { type: 'string', multiple: true },
  });
  const file = stringFlag(p, 'file');
  const pub = stringFlag(p, 'pub');
  if (file !== undefined && stringFlag(p, 'data-dir') !== undefined) {
    throw new UsageError('audit verify: give --data-dir D or --file EXPORT, not both');
  }
  const dataDir = file === undefined ? resolveDataDir(stringFlag(p, 'data-dir')) : undefined;
  const trustedKeys = stringsFlag(p, 'key').map((f) => readPublicKey(f, '--key'));
  // The key checkpoints must verify under: --pub, else the data dir's audit.pub, else (an export) each one's own.
  const keyOf = (): KeyObject | undefined => {
    if (pub !== undefined) return readPublicKey(pub);
    const own = dataDir === undefined ? undefined : auditKeyPaths(dataDir).pub;
    return own !== undefined && existsSync(own) ? readPublicKey(own) : undefined;
  };
  // The data dir's store, decided once where its read port is opened (store/read.ts).
  const record = dataDir === undefined ? undefined : await recordOfDataDir(dataDir);
  const publicKey = keyOf();
  // Checkpoints pin the entries they cover only under a key the user trusts (audit/walk-threads.ts).
  const trusted = publicKey !== undefined || trustedKeys.length > 0;
  let text: string | undefined;
  let walked: Walked | undefined;
  // Contract 14 (v4): a data dir or the database also holds the history to check against the chain.
  const history: HistorySource | undefined = record === undefined ? undefined : { reads: record };
  if (file !== undefined) {
    const cannotRead = (e: unknown) => new UsageError(`--file: cannot read ${file}: ${(e as Error).message}`);
    let bytes: ExportBytes;
    try {
      bytes = exportFile(file);
    } catch (e) {
      throw cannotRead(e);
    }
    // One pass first, over two threads (audit/walk-threads.ts); a record it finds anything off in is read whole below.
    try {
      const { joined } = await walkFile(bytes, { trusted });
      if (joined !== undefined) walked = finishWalk(joined, undefined, publicKey, { trustedKeys });
    } finally {
      bytes.close();
    }
    if (walked === undefined) {
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        throw cannotRead(e);
      }
    }
  } else {
    const checkpointKeys = [...(publicKey === undefined ? [] : [publicKey]), ...trustedKeys];
    const read = await walkRecord(record!.source, { trusted, checkpointKeys });
    if (read?.joined !== undefined) {
      walked = finishWalk(read.joined, read.checkpoints, publicKey, {
        trustedKeys,
        knownKeys: read.knownKeys,
      });
      if (walked !== undefined) Object.assign(history!, { read: read.history, folded: read.joined.history });
    }
  }
  let r: VerifyResult;
  let kept: ChainInput;
  if (walked !== undefined) {
    r = { ok: true, entries: walked.entries, checkpoints: walked.checkpoints, passkeys: 0 };
    if (walked.unpinned.length > 0) r.unpinned = walked.unpinned;
    kept = walked.kept;
  } else {
    ({ r, kept } = await verifyWhole(text, record, publicKey, trustedKeys));
  }
  const checkpoints = walked?.checkpoints ?? kept.checkpoints.length;
  if (file !== undefined && pub === undefined && trustedKeys.length === 0 && checkpoints > 0) {
    sayError(
      'audit verify: checkpoints checked against the key the export names; pass --pub FILE (your copy of `audit key`) to check them against yours',
    );
  }
  return answer(r, kept, history);
}

/** The line naming a signer known only from the database. */
function unpinnedLine(u: UnpinnedSigner): string {
  const seqs = u.seqs.length === 1 ? `seq ${u.seqs[0]}` : `seq ${u.seqs[0]} to ${u.seqs.at(-1)}`;
  return `${u.seqs.length} checkpoints (${seqs}) signed by node ${escapeForTerminal(u.name)} (key fingerprint ${u.fingerprint}) known only from the database; pin it with --key FILE (a copy of that node's \`ogf-broker audit key\`)`;
}

/** The failure with the lower seq of two results, else the second. */
function first(a: VerifyResult | undefined, b: VerifyResult): VerifyResult {
  if (a === undefined || a.ok) return b;
  if (b.ok || a.bad.seq <= b.bad.seq) return a;
  return b;
}

/** The whole input, for the first bad seq and why (verify.ts): an export's text, or the data dir's record. */
async function verifyWhole(
  text: string | undefined,
  record: Awaited<ReturnType<typeof recordOfDataDir>> | undefined,
  publicKey: KeyObject | undefined,
  trustedKeys: KeyObject[],
): Promise<{ r: VerifyResult; kept: ChainInput }> {
  let early: VerifyResult | undefined;
  let kept: ChainInput;
  if (text !== undefined) {
    const read = chainFromExport(text);
    kept = read.input;
    if (read.bad !== undefined) early = { ok: false, bad: read.bad };
  } else {
    const chain = await record!.chain();
    kept = chainFromRows(chain.rows, chain.checkpoints);
    kept.knownKeys = knownKeysOf(chain.nodes ?? []);
  }
  if (publicKey !== undefined) kept.publicKey = publicKey;
  kept.trustedKeys = trustedKeys;
  return { r: first(early, verifyChain(kept)), kept };
}

/** A verified chain's passkey approvals and history checked, then the one answer printed: its exit code. */
async function answer(
  verified: VerifyResult,
  kept: ChainInput,
  history: HistorySource | undefined,
): Promise<number> {
  let r = verified;
  if (r.ok) {
    // Contract 14: every passkey assertion kept with an approval, checked offline (contract 13.3).
    const checked = await verifyPasskeyApprovals(kept);
    r = checked.ok ? { ...r, passkeys: checked.count } : checked;
    if (checked.ok && !checked.keys && checked.count > 0) {
      sayError(
        'audit verify: this export holds part of the record: the passkey approvals’ signatures were checked, not that the record added their keys (verify a whole export or the data dir for that)',
      );
    }
  }
  if (r.ok && history !== undefined) {
    const lines = await historyLines(history, kept);
    if (lines.length > 0) {
      process.stdout.write(`${lines.join('\n')}\n`);
      return 1;
    }
  }
  if (r.ok) {
    process.stdout.write(
      `ok: ${r.entries} entries, ${r.checkpoints} checkpoints, ${r.passkeys} passkey approvals verified\n`,
    );
    for (const u of r.unpinned ?? []) process.stdout.write(`${unpinnedLine(u)}\n`);
    return 0;
  }
  process.stdout.write(`seq ${r.bad.seq}: ${r.bad.reason} (${r.bad.detail})\n`);
  return 1;
}
