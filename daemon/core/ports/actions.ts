/**
 * Contract 19 (v4): the store's port for a notification's one-time actions. A row is what an action URL's
 * token stands for — a command at a version, approve or deny, decided as one owner, offered through one
 * channel, until a time — kept by the SHA-256 of the token, never the token: what reads the database (a
 * backup, another node) cannot decide with it. Several nodes share PostgreSQL, so a token minted by one
 * is spent on whichever node its POST reaches, once.
 */

/** One action as stored. */
export interface ActionRecord {
  /** Lower-case hex SHA-256 of the token. */
  token_hash: string;
  command_id: string;
  /** The command's version the action was made for: at any other, it decides nothing. */
  version: number;
  action: 'approve' | 'deny';
  owner: string;
  /** The channel id (`push` for the owners' Web Push devices). */
  channel: string;
  /** ISO 8601 UTC (`toISOString`), so text order is time order. */
  expires_at: string;
}

export interface ActionStore {
  /** Stores the actions of one message (approve and deny) together. */
  put(rows: readonly ActionRecord[]): Promise<void>;
  /** The unspent action with this hash, whatever its expiry (the GET page). */
  find(tokenHash: string): Promise<ActionRecord | undefined>;
  /** Spends the action with this hash: deleted and returned in one statement, so only one caller gets it. */
  spend(tokenHash: string): Promise<ActionRecord | undefined>;
  /** Deletes every action that expired before `now` (ISO); resolves how many. */
  prune(now: string): Promise<number>;
}
