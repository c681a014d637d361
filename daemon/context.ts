/**
 * What the daemon hands to its edges (MCP, owner WebSocket and panel, doctor): the broker, the sources,
 * tokens, config and the origins it answers for. Edges depend on these interfaces,
 * not on how the daemon builds them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { OgfCueInput } from '../bridge-client/protocol.js';
import type { Config } from './config.js';
import type { Command, State, UpstreamRef } from './core/lifecycle.js';
import type { AuditEntry } from './core/store.js';
import type { DataDir } from './datadir.js';
import type { BrokerErrorCode } from './errors.js';
import type { Logger } from './log.js';
import type { Source } from './sources/source.js';
import type { Tokens } from './tokens.js';

/** A new command as an edge asks for it; the broker adds id, version, times and phase. */
export interface SubmitRequest {
  tool: Command['tool'];
  command: string;
  args: Record<string, unknown>;
  display: string[];
  session_file?: string;
  session_key?: string;
  session_fingerprint?: string;
  justification?: string;
  client: string;
  request_id?: string;
  /** Made as an MCP task (contract 10). */
  task?: { ttl_ms: number };
  /** Held in memory only, handed to the executor on launch (rule 4). Never stored, logged or shown. */
  secret?: unknown;
  /** Upstream calls (contract 7). */
  upstream?: UpstreamRef;
  /**
   * Approved at submit by a policy the owner set up (contract 7 trust_read_only_hint: `policy:read_only`),
   * in the same step as the insert; still a command, recorded and shown.
   */
  approved_by?: string;
}

export type SubmitResult =
  | { ok: true; command: Command; created: boolean }
  | { ok: false; code: 'RequestIdReused'; message: string }
  /** Contract 1.3/3.2 (v2): a cap on PENDING commands; `message` names the cap and its value. */
  | { ok: false; code: 'TooManyPending'; message: string };

export type ActionResult =
  | { ok: true; command: Command }
  | { ok: false; code: BrokerErrorCode; message: string };

/** The broker as the edges see it. The broker is the only writer of command state. */
export interface BrokerApi {
  /**
   * Queues a request (idempotent on `client` + `request_id`; an identical pending cue returns its twin),
   * unless the client or the broker is at its PENDING cap (`TooManyPending`, nothing queued).
   */
  submit(req: SubmitRequest): SubmitResult;
  /** Owner approval; `AlreadyDecided` is checked before `VersionConflict` (contract 5). */
  approve(id: string, version: number, by: string): ActionResult;
  deny(id: string, version: number, by: string, note?: string): ActionResult;
  /** Caller cancel while awaiting review; otherwise returns the command unchanged (ok). */
  cancel(id: string, by: string): ActionResult;
  reconcile(id: string, outcome: 'delivered' | 'not_delivered', by: string, note?: string): ActionResult;
  get(id: string): Command | undefined;
  /** Resolves at the first final state, or after `seconds` (or on abort) with the current command. */
  wait(id: string, seconds: number, signal?: AbortSignal): Promise<Command>;
  /** Every committed change, in commit order, synchronously after the commit. Returns unsubscribe. */
  subscribe(listener: (command: Command) => void): () => void;
  /** Every non-final command plus the newest `finalLimit` final ones, newest first. */
  snapshot(finalLimit?: number): Command[];
  /** Commands newest first, before a pending_id (or an ISO time) when given. */
  history(limit: number, before?: string): Command[];
  counts(): Partial<Record<State, number>>;
  /** An audit entry that changes no command (a feature-off cue, a refused login, ...). */
  audit(entry: AuditEntry): void;
}

/** A catalog command's description for `list_commands` (contract 3.1). */
export interface CatalogListing {
  name: string;
  description: string;
  params_schema: Record<string, unknown>;
  timeout_s: number;
}

export type PrepareResult =
  | { ok: true; request: SubmitRequest }
  | { ok: false; code: 'InvalidArguments' | 'UnknownCommand'; message: string };

export interface CatalogApi {
  list(): CatalogListing[];
  /** Validates `args` against the named command's params and builds its argv; names the offending field. */
  prepare(name: string, args: unknown, client: string): PrepareResult;
}

export interface CuesApi {
  /** Builds the `ogf.cue` request for validated input: fingerprint, session key, session file path, display. */
  prepare(input: OgfCueInput, client: string): SubmitRequest;
}

/** Handles a request when it is the route's; returns false to let the next route try. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;
export type UpgradeRoute = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => boolean;

export interface Origins {
  /** The daemon's own base URL (`http://HOST:PORT`). */
  url(): string;
  /** Host header check (DNS rebinding): loopback names on our port, and public_url's host. */
  isAllowedHost(host: string | undefined): boolean;
  /** Browser Origin check: the daemon's own origins and public_url. */
  isAllowedOrigin(origin: string): boolean;
}

export interface EdgeContext {
  config: Config;
  paths: DataDir;
  broker: BrokerApi;
  /** What an AI may ask for (the catalog, cues, every upstream's tools), in the order the MCP edge lists it. */
  sources: readonly Source[];
  tokens: Tokens;
  origins: Origins;
  log: Logger;
  version: string;
}

/** An edge the daemon mounts on its HTTP server. */
export interface Edge {
  routes: HttpRoute[];
  upgrades: UpgradeRoute[];
  close(): Promise<void>;
}
