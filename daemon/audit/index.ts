/**
 * The audit record's keeping and checking (contract 14): the Ed25519 key and its checkpoints, the chain's
 * verification and its export. The chain itself is computed by the store (core/model/audit-chain.ts).
 */
export { CHECKPOINT_INTERVAL_MS, CheckpointTimer, checkpointIntervalMs } from './checkpoints.js';
export { type ExportFilter, toCsv, toJsonl } from './export.js';
export {
  type AuditLink,
  digestOf,
  digestOfJson,
  type Expected,
  expectations,
  foldFact,
  type HistoryRow,
  historyMismatches,
  type Mismatch,
  type MismatchField,
  movedLinks,
  rowDisagrees,
} from './history-check.js';
export { type EntryFact, factOfEntry } from './history-facts.js';
export { emptyFolded, type FoldedHistory, HistoryFold } from './history-fold.js';
export {
  type HistorySource,
  historyLines,
  mismatchLines,
  type StoredHistoryRead,
  type StoredRow,
  storedMismatches,
} from './history-stored.js';
export {
  type AuditKey,
  auditKeyPaths,
  auditPublicKeyText,
  keyFingerprint,
  loadOrCreateAuditKey,
  parseAuditPublicKey,
  publicKeyDer,
  readPublicKey,
  signerOf,
} from './keys.js';
export { verifyPasskeyApprovals } from './passkeys.js';
export { chainFromExport, chainFromRows } from './sources.js';
export {
  type Bad,
  type BadReason,
  type ChainInput,
  type NamedKey,
  type UnpinnedSigner,
  type VerifyResult,
  verifyChain,
} from './verify.js';
export {
  ChainWalk,
  finishWalk,
  type Joined,
  joinParts,
  type Walked,
  type WalkPart,
  walkExport,
  walkLines,
} from './walk.js';
export { type ExportBytes, exportFile } from './walk-export.js';
export { knownKeysOf, type RecordWalk, walkRecord } from './walk-record.js';
export {
  type DatabaseWalk,
  type WalkOptions,
  type WalkThreads,
  walkDatabase,
  walkFile,
  walkRanges,
} from './walk-threads.js';
