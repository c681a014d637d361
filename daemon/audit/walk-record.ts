/**
 * `audit verify`'s first pass over a data dir's store, whichever it is (contracts 14, 16): the read port
 * (store/read.ts) says how the chain is served — broker.db in seq ranges, walked by two threads
 * (walk-threads.ts), or the shared database streamed to one walk — and this walks it, so the command only
 * parses flags and prints. Also the nodes' published keys as the walk and verify.ts take them.
 */
import type { Checkpoint } from '../core/model/audit-chain.js';
import type { ChainSource, NodeKey, StoredHistoryRead } from '../store/read.js';
import { keyFingerprint, parseAuditPublicKey } from './keys.js';
import type { NamedKey } from './verify.js';
import { ChainWalk, type Joined, joinParts } from './walk.js';
import { type WalkOptions, walkRanges } from './walk-threads.js';

/** The nodes' published keys that parse (a node that has not published one signs nothing verifiable). */
export function knownKeysOf(nodes: readonly NodeKey[]): NamedKey[] {
  const out: NamedKey[] = [];
  for (const n of nodes) {
    const key = n.key === null ? undefined : parseAuditPublicKey(n.key);
    if (key !== undefined) out.push({ name: n.name, key, fingerprint: keyFingerprint(key) });
  }
  return out;
}

/** The chain walked, with what was read in the walk's snapshot. */
export interface RecordWalk {
  /** Undefined: something is off (the caller reads the record whole). */
  joined: Joined | undefined;
  checkpoints: Checkpoint[];
  /** The nodes' keys (a shared database), none on broker.db. */
  knownKeys: NamedKey[];
  /** The history the chain is checked against (contract 14 (v4)). */
  history?: StoredHistoryRead | undefined;
}

/** The whole chain of `source` walked once; undefined when broker.db holds no chain. */
export async function walkRecord(source: ChainSource, options: WalkOptions): Promise<RecordWalk | undefined> {
  if (source.kind === 'ranges') {
    const read = await walkRanges(source.open(), options);
    return read === undefined
      ? undefined
      : { joined: read.joined, checkpoints: read.checkpoints, knownKeys: [], history: read.history };
  }
  const walk = new ChainWalk({ history: {} });
  const read = await source.walk((entry, hash) => walk.row(entry, hash));
  return {
    joined: read.stopped ? undefined : joinParts([walk.part()]),
    checkpoints: read.checkpoints,
    knownKeys: knownKeysOf(read.nodes),
    history: read.history,
  };
}
