/**
 * Helpers for the fault suites: a catalog whose command leaves one countable trace per launch, an
 * in-process avatar app (the real app-side endpoint) that records every cue it applies, a read-only look
 * into broker.db (rows and the append-only audit log), and the checks every crash trial ends with.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AppliedCue } from '../../bridge-client/avatar-state.js';
import { BridgeEndpoint } from '../../bridge-client/endpoint.js';
import { DENY_REASONS, FAIL_REASONS, UNKNOWN_REASONS } from '../../daemon/base/errors.js';

/** `mark {word} {ms}`: appends "word pid" to MARK, then lingers `ms` before exiting 0. */
export function markCatalog(markFile: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    commands: {
      mark: {
        description: 'Append a line, linger, exit 0',
        argv: [
          process.execPath,
          '-e',
          'require("fs").appendFileSync(process.argv[1], process.argv[2] + " " + process.pid + "\\n"); setTimeout(() => {}, Number(process.argv[3]))',
          markFile,
          '{word}',
          '{ms}',
        ],
        params: {
          word: { type: 'string', max_length: 40, pattern: '^[a-z0-9]+$' },
          ms: { type: 'integer', min: 0, max: 5000 },
        },
        timeout_s: 30,
      },
    },
    ...extra,
  };
}

/** How many times each word was launched. */
export function launches(markFile: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync(markFile)) return out;
  for (const line of readFileSync(markFile, 'utf8').split('\n')) {
    const word = line.split(' ')[0];
    if (word) out.set(word, (out.get(word) ?? 0) + 1);
  }
  return out;
}

export interface AvatarApp {
  url: string;
  endpoint: BridgeEndpoint;
  sessionId: string;
  /** Every cue applied, in order (a cue_id appearing twice would be a replay). */
  applied: AppliedCue[];
  count(cueId: string): number;
  close(): Promise<void>;
}

/** The real app-side endpoint on a loopback port, recording what it applies. */
export async function startAvatarApp(): Promise<AvatarApp> {
  const applied: AppliedCue[] = [];
  const endpoint = new BridgeEndpoint({ apply: (c) => void applied.push(c) });
  const server: Server = createServer((_q, s) => s.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => endpoint.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/ogf-bridge`,
    endpoint,
    sessionId: endpoint.sessionId,
    applied,
    count: (id) => applied.filter((c) => c.cue_id === id).length,
    async close() {
      await endpoint.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export interface Row {
  id: string;
  state: string;
  version: number;
  reason?: string;
  review_expires_at: string;
  /** Versions recorded in the audit log for this command, in order. */
  auditVersions: number[];
}

/** Reads commands and their audit versions straight from the file (what survives a crash). */
export function readRows(dataDir: string, ids: readonly string[]): Map<string, Row> {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    const out = new Map<string, Row>();
    const get = db.prepare('SELECT body FROM commands WHERE id = ?');
    const audit = db.prepare('SELECT version FROM audit WHERE command_id = ? ORDER BY seq');
    for (const id of ids) {
      const row = get.get(id) as { body: string } | undefined;
      if (!row) continue;
      const c = JSON.parse(row.body) as {
        id: string;
        version: number;
        review_expires_at: string;
        phase: { state: string; reason?: string };
      };
      const r: Row = {
        id,
        state: c.phase.state,
        version: c.version,
        review_expires_at: c.review_expires_at,
        auditVersions: (audit.all(id) as Array<{ version: number }>).map((a) => a.version),
      };
      if (c.phase.reason !== undefined) r.reason = c.phase.reason;
      out.set(id, r);
    }
    return out;
  } finally {
    db.close();
  }
}

/** The cue session files left in run/. */
export function sessionFiles(dataDir: string): string[] {
  const run = join(dataDir, 'run');
  return existsSync(run) ? readdirSync(run).filter((n) => n.startsWith('cue-')) : [];
}

/** Contract 2's table: a final state with a reason it allows (or a PENDING state without one). */
export const ALLOWED: Record<string, ReadonlyArray<string | undefined>> = {
  awaiting_review: [undefined],
  approved: [undefined],
  running: [undefined],
  succeeded: [undefined],
  // The catalog itself (daemon/base/errors.ts), never a hand copy that drifts from it.
  denied: DENY_REASONS,
  failed: FAIL_REASONS,
  unknown: UNKNOWN_REASONS,
};

/** Rule 8 and the audit promise: versions 1..n, each change one audit entry, no gap, no repeat. */
export function auditConsistent(r: Row): boolean {
  return r.auditVersions.length === r.version && r.auditVersions.every((v, i) => v === i + 1);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
