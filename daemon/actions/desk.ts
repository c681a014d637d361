/**
 * A notification's one-time actions (contract 19 (v4)). Each is a URL `<base>/act/<token>`: 256 random bits
 * (base64url, 43 characters), stored only as their SHA-256 (store: `actions`), bound to the command's id
 * and version, approve or deny, the owner it decides as and the channel that carried it; valid 10 minutes
 * and only at that version. Spending deletes the row in one statement, so a token decides at most once on
 * any node; a spent, expired or unknown token is gone alike (410), and telling them apart would only help
 * whoever guesses. Expired rows are pruned every minute.
 *
 * ```
 *  waiting message ─▶ mint(c, owner, channel) ─▶ offersActions(c)? ─no─▶ none (no links in the message)
 *                                                   └ yes ─▶ 2 tokens ─▶ rows (hash only) ─▶ 2 URLs
 *  GET  /act/<t> ─▶ look(t): row, unexpired ─▶ page (nothing spent)
 *  POST /act/<t> ─▶ spend(t): row deleted ─▶ unexpired? ─▶ the owner route decides at the row's version
 * ```
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../base/index.js';
import type { ActionRecord, ActionStore, Command } from '../core/index.js';
import { offersActions } from './offer.js';

/** Contract 19: how long an action may be used. */
export const ACTION_TTL_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 60_000;
/** 32 random bytes in base64url, unpadded. */
export const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export type ActionName = ActionRecord['action'];

/** The two URLs a message carries, and until when they work. */
export interface ActionLinks {
  approve: string;
  deny: string;
  expires_at: string;
}

export interface ActionDeskOptions {
  store: ActionStore;
  /** `public_url`, or the daemon's own URL. */
  baseUrl: () => string;
  /** Whether an owner by this name exists now (a channel's `owner` that names nobody offers nothing). */
  isOwner: (name: string) => boolean;
  log: Logger;
  now?: () => number;
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export class ActionDesk {
  readonly #o: ActionDeskOptions;
  readonly #now: () => number;
  readonly #pruner: NodeJS.Timeout;

  constructor(o: ActionDeskOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.#pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.#pruner.unref();
  }

  /** Approve and Deny for `c`, decided as `owner` through `channel`; undefined when `c` gets none. */
  async mint(c: Command, owner: string, channel: string): Promise<ActionLinks | undefined> {
    if (!offersActions(c)) return undefined;
    if (!this.#o.isOwner(owner)) {
      this.#o.log.log('warn', 'actions_owner_unknown', { channel, owner });
      return undefined;
    }
    const expires_at = new Date(this.#now() + ACTION_TTL_MS).toISOString();
    const made = (['approve', 'deny'] as const).map((action) => {
      const token = randomBytes(32).toString('base64url');
      const row: ActionRecord = {
        token_hash: tokenHash(token),
        command_id: c.id,
        version: c.version,
        action,
        owner,
        channel,
        expires_at,
      };
      return { token, row };
    });
    await this.#o.store.put(made.map((m) => m.row));
    const base = this.#o.baseUrl().replace(/\/+$/, '');
    const [approve, deny] = made.map((m) => `${base}/act/${m.token}`);
    return { approve: approve!, deny: deny!, expires_at };
  }

  /** The unspent, unexpired action `token` stands for (nothing is spent); undefined when gone. */
  async look(token: string): Promise<ActionRecord | undefined> {
    if (!TOKEN_RE.test(token)) return undefined;
    const row = await this.#o.store.find(tokenHash(token));
    return row !== undefined && this.#live(row) ? row : undefined;
  }

  /** Spends `token`: its action, once, if unexpired; undefined when gone (spent, expired, never made). */
  async spend(token: string): Promise<ActionRecord | undefined> {
    if (!TOKEN_RE.test(token)) return undefined;
    const row = await this.#o.store.spend(tokenHash(token));
    return row !== undefined && this.#live(row) ? row : undefined;
  }

  /** Deletes the expired rows; never throws (a store that is down is tried again next minute). */
  async prune(): Promise<void> {
    try {
      await this.#o.store.prune(new Date(this.#now()).toISOString());
    } catch (e) {
      this.#o.log.log('warn', 'actions_prune_failed', { error: (e as Error).message });
    }
  }

  close(): void {
    clearInterval(this.#pruner);
  }

  #live(row: ActionRecord): boolean {
    return Date.parse(row.expires_at) > this.#now();
  }
}
