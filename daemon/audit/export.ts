/**
 * `ogf-broker audit export` and the panel's export (contract 14): JSONL — one entry a line, with its `seq`,
 * `prev` and `hash`, each line the entry's canonical JSON (RFC 8785), so a line is exactly one text and any
 * change to it shows; then the checkpoints that cover them (`{"type":"checkpoint","seq","hash","at",
 * "signature","public_key"}`); a filtered export ends with `{"type":"export",…}` naming its filter, which
 * tells `audit verify --file` where gaps are expected. CSV: `seq,at,actor,event,command_id,summary`.
 */
import { type ChainEntry, type Checkpoint, canonicalJson } from '../core/model/audit-chain.js';

/** What an export holds: a time range, or some commands' entries. */
export interface ExportFilter {
  since?: string;
  until?: string;
  commandIds?: readonly string[];
}

/**
 * The JSONL export of `entries` with the checkpoints among them, signed under `publicKey` (base64 SPKI DER;
 * on a shared database each checkpoint's own signer's: contract 16).
 */
export function toJsonl(
  entries: readonly ChainEntry[],
  checkpoints: readonly Checkpoint[],
  publicKey: string | undefined | ((cp: Checkpoint) => string | undefined),
  filter: ExportFilter = {},
): string {
  const lines = entries.map((e) => canonicalJson(e));
  const first = entries[0]?.seq ?? 1;
  const last = entries.at(-1)?.seq ?? 0;
  for (const cp of checkpoints) {
    if (cp.seq < first || cp.seq > last) continue;
    const line: Record<string, unknown> = { type: 'checkpoint', ...cp };
    const key = typeof publicKey === 'function' ? publicKey(cp) : publicKey;
    if (key !== undefined) line.public_key = key;
    lines.push(canonicalJson(line));
  }
  const marker: Record<string, unknown> = {};
  if (filter.since !== undefined) marker.since = filter.since;
  if (filter.until !== undefined) marker.until = filter.until;
  if (filter.commandIds !== undefined) marker.command_ids = [...filter.commandIds];
  if (Object.keys(marker).length > 0) lines.push(canonicalJson({ type: 'export', ...marker }));
  return lines.map((l) => `${l}\n`).join('');
}

/** RFC 4180 quoting; a cell a spreadsheet would run as a formula (= + - @) is prefixed with `'`. */
function cell(v: string): string {
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One line of what an entry says: its data's fields as `key=value`, scalar values only. */
function summary(e: ChainEntry): string {
  return Object.entries(e.data)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join('; ');
}

/** The CSV export: a header, then one row per entry. */
export function toCsv(entries: readonly ChainEntry[]): string {
  const rows = ['seq,at,actor,event,command_id,summary'];
  for (const e of entries) {
    rows.push([String(e.seq), e.at, e.actor, e.event, e.command_id ?? '', summary(e)].map(cell).join(','));
  }
  return rows.map((r) => `${r}\r\n`).join('');
}
