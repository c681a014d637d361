/**
 * What the daemon hands to its edges (MCP, owner WebSocket and panel, doctor): the broker, the sources,
 * tokens, config and the origins it answers for. Edges depend on these interfaces,
 * not on how the daemon builds them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { OgfCueInput } from '../bridge-client/protocol.js';
import type { BrokerErrorCode } from './base/errors.js';
import type { Logger } from './base/log.js';
import type { Config } from './config/index.js';
import type { Grant } from './core/grants.js';
import type { Command, KindFields, State } from './core/lifecycle.js';
import type { AuditEntry } from './core/ports.js';
import type { DataDir } from './datadir/datadir.js';
import type { Source } from './kind/source.js';
import type { SetupFeed } from './owner/setup.js';
import type { Tokens } from './tokens/tokens.js';

/**
 * A new command as an edge asks for it; the broker adds id, version, times and phase. Its kind's own fields
 * (KindFields: kinds/<kind>/fields.ts) are stored on the command as they come.
 */
export interface SubmitRequest extends KindFields {
  tool: Command['tool'];
  command: string;
  args: Record<string, unknown>;
  display: string[];
  justification?: string;
  client: string;
  request_id?: string;
  /** Made as an MCP task (contract 10). */
  task?: { ttl_ms: number };
  /** Held in memory only, handed to the executor on launch (rule 4). Never stored, logged or shown. */
  secret?: unknown;
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
  | { ok: true; command: Command; grant?: Grant }
  | { ok: false; code: BrokerErrorCode; message: string };

/** An owner's new grant (contract 8): what it allows, for how long, how many times. */
export interface GrantSpec {
  command: string;
  /** One client name or `*`. */
  client: string;
  /** Present: only these exact arguments (JSON equality). Absent: any arguments. */
  args?: Record<string, unknown>;
  ttl_s: number;
  uses?: number;
  note?: string;
}

/** The grant part of an approve frame (contract 5 v2): approve and allow the same again. */
export interface ApproveGrant {
  same_args: boolean;
  ttl_s: number;
  uses?: number;
  note?: string;
}

export type GrantResult =
  | { ok: true; grant: Grant }
  | { ok: false; code: 'NotFound' | 'NotGrantable' | 'NotRevocable'; message: string };

/**
 * The broker as the edges see it. The broker is the only writer of command state. Its actions resolve once
 * their change committed (group commit: architecture.md example 3), and reject with the store's error when
 * the commit failed (nothing of it is kept); its reads see committed state only.
 */
export interface BrokerApi {
  /**
   * Queues a request (idempotent on `client` + `request_id`; an identical pending cue returns its twin),
   * unless the client or the broker is at its PENDING cap (`TooManyPending`, nothing queued).
   */
  submit(req: SubmitRequest): Promise<SubmitResult>;
  /**
   * Owner approval; `AlreadyDecided` is checked before `VersionConflict` (contract 5). With `grant`, the
   * approval and a new grant for the command's `command` and `client` commit together (contract 5 v2, 8).
   */
  approve(id: string, version: number, by: string, grant?: ApproveGrant): Promise<ActionResult>;
  deny(id: string, version: number, by: string, note?: string): Promise<ActionResult>;
  /** Caller cancel while awaiting review; otherwise returns the command unchanged (ok). */
  cancel(id: string, by: string): Promise<ActionResult>;
  reconcile(
    id: string,
    outcome: 'delivered' | 'not_delivered',
    by: string,
    note?: string,
  ): Promise<ActionResult>;
  get(id: string): Command | undefined;
  /** Resolves at the first final state, or after `seconds` (or on abort) with the current command. */
  wait(id: string, seconds: number, signal?: AbortSignal): Promise<Command>;
  /** Every committed change, in commit order, synchronously after its batch committed. Returns unsubscribe. */
  subscribe(listener: (command: Command) => void): () => void;
  /**
   * Every committed grant change (created, used, revoked, expired, spent), in commit order with the
   * command changes (a grant-approved command's upsert comes before its grant's). Returns unsubscribe.
   */
  subscribeGrants(listener: (grant: Grant) => void): () => void;
  /** Creates an owner grant (contract 8). */
  grant(spec: GrantSpec, by: string): Promise<GrantResult>;
  /** Ends a grant at once; an already ended one is ok; a config grant is `NotRevocable`. */
  revoke(id: string, by: string): Promise<GrantResult>;
  /** Every live grant, oldest first (the owner snapshot). */
  liveGrants(): Grant[];
  /** The newest `limit` grants in any state, newest first (`grant list --all`). */
  recentGrants(limit: number): Promise<Grant[]>;
  /** Every non-final command plus the newest `finalLimit` final ones, newest first. */
  snapshot(finalLimit?: number): Command[];
  /** Commands newest first, before a pending_id (or an ISO time) when given. */
  history(limit: number, before?: string): Promise<Command[]>;
  /**
   * One page of `client`'s tasks, newest first, older than the task `before` (issue 19 finding 3: read by
   * index, never another client's rows): at most `limit`, and about `maxChars` of stored records. Undefined
   * when `before` is not one of this client's tasks.
   */
  tasksOf(
    client: string,
    limit: number,
    maxChars: number,
    before?: string,
  ): Promise<{ commands: Command[]; more: boolean } | undefined>;
  counts(): Promise<Partial<Record<State, number>>>;
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
  /** The owner panel's first-run help (issue 19); absent: hello carries none. */
  setup?: SetupFeed;
}

/** An edge the daemon mounts on its HTTP server. */
export interface Edge {
  routes: HttpRoute[];
  upgrades: UpgradeRoute[];
  close(): Promise<void>;
}
