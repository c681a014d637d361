/**
 * What the mirror (mirror.ts) is loaded with, from one REPEATABLE READ snapshot (store.ts reload): every
 * command not yet final and the newest `window` final ones, every live grant and the newest `window` ended
 * ones, every owner's and client's token hash.
 */
import type { QueryResultRow } from 'pg';
import type { Command, Grant } from '../../core/index.js';
import { ACTIVE_STATES, FINAL_STATES, inList } from '../rules/index.js';
import type { Mirror } from './mirror.js';

type Query = <R extends QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

export async function loadMirror(q: Query, m: Mirror, window: number): Promise<void> {
  type C = { seq: number; body: string };
  for (const r of await q<C>(
    `SELECT seq, body FROM commands WHERE state IN ${inList(ACTIVE_STATES)} ORDER BY seq`,
  ))
    m.applyCommand(JSON.parse(r.body) as Command, r.seq);
  for (const r of (
    await q<C>(
      `SELECT seq, body FROM commands WHERE state IN ${inList(FINAL_STATES)} ORDER BY seq DESC LIMIT $1`,
      [window],
    )
  ).reverse())
    m.applyCommand(JSON.parse(r.body) as Command, r.seq);
  type G = { seq: number; rev: number; body: string };
  for (const r of await q<G>("SELECT seq, rev, body FROM grants WHERE state = 'live' ORDER BY seq"))
    m.applyGrant(JSON.parse(r.body) as Grant, r.seq, r.rev);
  for (const r of (
    await q<G>("SELECT seq, rev, body FROM grants WHERE state <> 'live' ORDER BY seq DESC LIMIT $1", [window])
  ).reverse())
    m.applyGrant(JSON.parse(r.body) as Grant, r.seq, r.rev);
  for (const t of ['owners', 'mcp_clients'] as const) {
    for (const r of await q<{ name: string; token_hash: string; rev: number }>(
      `SELECT name, token_hash, rev FROM ${t}`,
    ))
      m.applyToken(t, r.name, r.token_hash, r.rev);
  }
}
