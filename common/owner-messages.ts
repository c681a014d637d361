/**
 * What the daemon sends an owner over `/owner/ws` (contracts.md 5), as types: the owner protocol's wire,
 * which the daemon (daemon/owner/) sends, the panel (owner-ui/) and the terminal client
 * (daemon/owner-terminal/) read; what an owner sends back is proved by zod schemas in daemon/owner-protocol/.
 * Free of zod and of Node APIs, as everything in common/ is, because the panel's bundle is built from it too.
 */

import type { OwnerErrorCode } from './codes.js';
import type { Grant } from './grant.js';
import type { View } from './view.js';

export const PROTOCOL = 'ogf-broker-owner/1';
/** Where the owner WebSocket is served (contract 5): the panel and the terminal connect here. */
export const OWNER_WS_PATH = '/owner/ws';

/**
 * WebSocket subprotocols of the panel (contract 5 v2): it offers `ogf-owner.<panel key>` to authenticate,
 * together with the bare `ogf-owner`, which the daemon then selects so the key is not echoed back.
 */
export const OWNER_SUBPROTOCOL = 'ogf-owner';
export const PANEL_KEY_PREFIX = `${OWNER_SUBPROTOCOL}.`;
export type OwnerSubprotocol = typeof OWNER_SUBPROTOCOL;

/** The codes a `reply` may carry. */
export type ReplyCode = OwnerErrorCode;

/**
 * What the owner needs to connect an AI and what the AI can do right now (issue 19 finding 5: the empty
 * panel said "Nothing waits for you" and nothing else). An addition to contract 5: `hello.setup`, then a
 * `setup` frame whenever it changes (an upstream connects after start). Never holds a token: only the
 * command that prints one. Names are the owner's config's (catalog commands, upstreams), never an AI's.
 */
export interface SetupInfo {
  /** The daemon's own /mcp URL. */
  mcp_url: string;
  /** public_url's /mcp, when a tunnel or proxy serves the daemon (ChatGPT). */
  public_mcp_url?: string;
  /** The exact shell command that prints client `local`'s MCP token (self-command.ts). */
  token_command: string;
  /** Set when OGF_BROKER_MCP_TOKEN fixes client `local`'s token: that value, not the command's, is it. */
  token_fixed_by_env?: true;
  /** Catalog command names (`run_command_wait`). */
  commands: string[];
  /** Each upstream: connected now, and how many of its tools are exposed. */
  upstreams: Array<{ name: string; connected: boolean; tools: number }>;
  /** Whether `ogf_cue` reaches an avatar app (the OGF bridge is configured). */
  ogf_bridge_configured: boolean;
  /** Where the docs are: README.md and docs/clients.md, absolute paths when the package has them. */
  docs: string[];
}

export interface HelloMessage {
  type: 'hello';
  protocol: typeof PROTOCOL;
  server_time: string;
  /** The signed-in owner's name (contract 5 v2). */
  owner: string;
  /** First-run help (issue 19; an addition to contract 5's hello). */
  setup?: SetupInfo;
  /** Contract 13.3 (an addition): how this browser session signed in; absent for a terminal (Bearer). */
  signed_in_with?: 'token' | 'passkey';
}
/** The setup changed (an upstream connected or went down); sent to every owner. */
export interface SetupMessage {
  type: 'setup';
  setup: SetupInfo;
}
export interface SnapshotMessage {
  type: 'snapshot';
  commands: View[];
  /** Every live grant (contract 5 v2). */
  grants: Grant[];
}
/** A grant was created, used, revoked, expired or spent (contract 5 v2), in commit order. */
export interface GrantUpsertMessage {
  type: 'grant_upsert';
  grant: Grant;
}
/** The answer to `grants` (not in contract 5: `grant list --all`): newest first. */
export interface GrantsMessage {
  type: 'grants';
  req_id: string;
  grants: Grant[];
}
export interface UpsertMessage {
  type: 'upsert';
  command: View;
}
export type ReplyMessage =
  | { type: 'reply'; req_id: string | null; ok: true; grant?: Grant }
  | { type: 'reply'; req_id: string | null; ok: false; error: { code: ReplyCode; message: string } };
export interface HistoryMessage {
  type: 'history';
  req_id: string;
  commands: View[];
}

/**
 * The answer to `args` (an addition to contract 5): a command's whole arguments, exactly as stored, when
 * its View carries only a preview (`args_truncated`). `version` is the command's at the time; arguments
 * never change between versions.
 */
export interface ArgsMessage {
  type: 'args';
  req_id: string;
  id: string;
  version: number;
  args: Record<string, unknown>;
}

/**
 * Contract 11: a rule or grant tested against the newest `of` commands: how many it would have matched,
 * by the state they ended in, and up to 20 of their ids.
 */
export interface PolicyTestMessage {
  type: 'policy_test';
  req_id: string;
  of: number;
  matched: number;
  by_state: Record<string, number>;
  sample: string[];
}

/**
 * Contract 18 (v4): a rule as the Rules area and `ogf-broker rule list` show it — the config's (read-only)
 * or an owner's (with its author and time) — and how many requests it decided (approved or denied at
 * submit, on every node).
 */
export interface RuleInfo {
  id: string;
  source: 'config' | 'owner';
  when: string;
  decision: 'allow' | 'deny' | 'ask';
  note?: string;
  approvals?: number;
  enabled: boolean;
  created_by?: string;
  created_at?: string;
  decided: number;
}

/** Contract 18: `rules` → every rule, the config's first, then the owners' in their order. */
export interface RulesMessage {
  type: 'rules';
  req_id: string;
  rules: RuleInfo[];
}

/** Contract 18: the rule an owner's `rule_add` or `rule_update` made (as `rules` lists it). */
export interface RuleChangedMessage {
  type: 'rule_add' | 'rule_update';
  req_id: string;
  rule: RuleInfo;
}

/** Contract 18: `rule_remove` → the id of the rule removed. */
export interface RuleRemovedMessage {
  type: 'rule_remove';
  req_id: string;
  id: string;
}

/** One audit entry as the daemon chains it (contract 14; core/model/audit-chain.ts ChainEntry). */
export interface AuditEntryView {
  seq: number;
  at: string;
  actor: string;
  event: string;
  command_id?: string;
  data: Record<string, unknown>;
  prev: string;
  hash: string;
}

/**
 * The answer to `audit` (contract 14): the entries of `command_id` (or of `command_ids`), oldest first, and
 * with `format: "jsonl"` the JSONL export of them, which `ogf-broker audit verify --file` checks.
 */
export interface AuditMessage {
  type: 'audit';
  req_id: string;
  command_id?: string;
  command_ids?: string[];
  entries: AuditEntryView[];
  jsonl?: string;
  /**
   * Contract 14 (v4), for one `command_id`: the fields of the command that disagree with its entries
   * (`state`, `reason`, `decided_by`, `command`, `args`, `display`, `command_id`); absent when they agree.
   * The panel marks the card "the record disagrees".
   */
  record_disagrees?: string[];
}

/** One of the owner's passkeys, as `passkey_list` shows it (contract 13.3): public data only. */
export interface PasskeyInfo {
  credential_id: string;
  /** The relying party it belongs to: `localhost` or public_url's host. */
  rp_id: string;
  created_at: string;
  last_used_at?: string;
}

/** Contract 13.3: `passkey_begin` → the creation options for the browser's startRegistration. */
export interface PasskeyBeginMessage {
  type: 'passkey_begin';
  req_id: string;
  options: Record<string, unknown>;
}
export interface PasskeyListMessage {
  type: 'passkey_list';
  req_id: string;
  passkeys: PasskeyInfo[];
}
/**
 * Contract 13.3: `approve_challenge` → the challenge over exactly what approving `id` at `version` means
 * (valid 120 s, once) and, an addition, the request options for the browser's startAuthentication.
 */
export interface ApproveChallengeMessage {
  type: 'approve_challenge';
  req_id: string;
  id: string;
  version: number;
  challenge: string;
  options: Record<string, unknown>;
}

/** The answer to `push_list` (contract 13.2 lists them; the frame is ours): the owner's devices, oldest first. */
export interface PushDevicesMessage {
  type: 'push_devices';
  req_id: string;
  devices: Array<{ endpoint: string; created_at: string; user_agent?: string }>;
}

/** Everything the server sends an owner. */
/** One line of `doctor` (contract 17: the running daemon's own checks). */
export interface DiagnosisCheck {
  name: string;
  ok: boolean;
  detail: string;
  warn?: boolean;
}

/** The running daemon's checks of what it uses (daemon/owner-protocol/diagnose.ts). */
export interface DoctorMessage {
  type: 'doctor';
  req_id: string;
  pid: number;
  /** The SHA-256 of the config file the daemon loaded (null: none): the terminal compares its own. */
  config_sha256: string | null;
  checks: DiagnosisCheck[];
}

/** A test message through each of the running daemon's channels (daemon/owner-protocol/diagnose.ts). */
export interface NotifyTestMessage {
  type: 'notify_test';
  req_id: string;
  pid: number;
  results: Array<{ id: string; kind: string; ok: boolean; status?: number; error?: string }>;
}

/**
 * What `ogf-broker reload` is told (contract 17): the reloadable fields that changed and the fields that
 * need a restart, or (`ok: false`) why the daemon kept its config.
 */
export type ReloadMessage = { type: 'reload'; req_id: string; pid: number } & (
  | { ok: true; config_sha256: string | null; changed: string[]; restart_needed: string[] }
  | { ok: false; error: string }
);

/** Contract 20: the answer to `revert` — the id of the owner's new command that writes the file back. */
export interface RevertMessage {
  type: 'revert';
  req_id: string;
  id: string;
}

/**
 * Contract 20, "checked by reading it": the answer to `revert_check` — what reverting command `id` would
 * change now (the diff back, from a read of the file). Nothing was queued.
 */
export interface RevertCheckMessage {
  type: 'revert_check';
  req_id: string;
  id: string;
  preview: NonNullable<View['preview']>;
}

export type ServerMessage =
  | HelloMessage
  | SnapshotMessage
  | UpsertMessage
  | GrantUpsertMessage
  | ReplyMessage
  | HistoryMessage
  | GrantsMessage
  | ArgsMessage
  | PolicyTestMessage
  | AuditMessage
  | SetupMessage
  | PushDevicesMessage
  | PasskeyBeginMessage
  | PasskeyListMessage
  | ApproveChallengeMessage
  | DoctorMessage
  | NotifyTestMessage
  | ReloadMessage
  | RulesMessage
  | RuleChangedMessage
  | RuleRemovedMessage
  | RevertMessage
  | RevertCheckMessage;
export type { Grant, View };
