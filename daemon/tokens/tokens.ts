/**
 * Owner and MCP client tokens (contracts.md 1.1, 1.2, 3, 9). Owner `owner`'s token and client `local`'s
 * MCP token live in 0600 files (or come fixed from the environment); every other owner's and client's
 * token is kept only as its SHA-256 hash in the store, and every check — owners' included — goes through
 * those hashes, so a token created or rotated by `ogf-broker token` in another process is honoured by a
 * running daemon at once (for owners, the owner edge also polls for rotations and ends the old token's
 * sessions and sockets: owner/edge.ts).
 */
import { readFileSync, renameSync } from 'node:fs';
import { iso, UsageError } from '../base/index.js';
import { type Actor, sha256Hex, type TokenBook } from '../core/index.js';
import { type DataDir, newToken, readOrCreateSecret, writePrivateFileExclusive } from '../datadir/index.js';

export const LOCAL_CLIENT = 'local';
/** Contract 9: the owner every data dir starts with, whose token is owner.token (or OGF_BROKER_OWNER_TOKEN). */
export const FIRST_OWNER = 'owner';
const CLIENT_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const OWNER_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const OWNER_ENV = 'OGF_BROKER_OWNER_TOKEN';
const MCP_ENV = 'OGF_BROKER_MCP_TOKEN';
const DAEMON: Actor = { kind: 'daemon', name: 'daemon' };

/**
 * Who an owner credential belongs to: the owner's name and the hash of the token it was checked against.
 * A session or socket keeps this; it stays valid exactly while that hash is still the owner's (a rotation
 * replaces it). Never the token itself.
 */
export interface OwnerCredential {
  name: string;
  hash: string;
}

/** Once per MCP request and owner check: the one-shot hash (core/model/audit-chain.ts), no Hash object each time. */
export function hashToken(token: string): string {
  return sha256Hex(token);
}

function fixedToken(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (v.length < 32 || /\s/.test(v)) {
    throw new UsageError(
      `${name}: must be at least 32 characters without spaces, got ${v.length} characters`,
    );
  }
  return v;
}

/** Checks a client name for `token mcp --client NAME`. */
export function checkClientName(name: string): string {
  if (!CLIENT_RE.test(name)) {
    throw new UsageError(`--client: must match ^[a-z0-9][a-z0-9_-]{0,31}$, got ${JSON.stringify(name)}`);
  }
  return name;
}

/** Checks an owner name for `token owner --name NAME` (contract 9). */
export function checkOwnerName(name: string): string {
  if (!OWNER_RE.test(name)) {
    throw new UsageError(`--name: must match ^[a-z][a-z0-9_-]{0,31}$, got ${JSON.stringify(name)}`);
  }
  return name;
}

function writeSecretAtomically(path: string, token: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writePrivateFileExclusive(tmp, `${token}\n`);
  renameSync(tmp, path);
}

/** A secret file's content, or undefined when it does not exist (never creates it). */
function readSecretIfPresent(path: string): string | undefined {
  try {
    const v = readFileSync(path, 'utf8').trim();
    return v === '' ? undefined : v;
  } catch {
    return undefined;
  }
}

/** What `token owner` did: printed differently, since a created or rotated URL is shown only once. */
export type OwnerTokenOutcome = 'existing' | 'created' | 'rotated';

export class Tokens {
  readonly #paths: DataDir;
  readonly #store: TokenBook;
  readonly #env: NodeJS.ProcessEnv;
  #ownerToken: string;

  /**
   * Loads owner `owner`'s token (creating owner.token unless fixed by the environment). Writes nothing to
   * the store: only `start` refreshes the stored hashes (refreshAtStart), so a `token` command run from a
   * shell whose environment differs from the daemon's cannot replace the running daemon's tokens.
   */
  constructor(paths: DataDir, store: TokenBook, env: NodeJS.ProcessEnv = process.env) {
    this.#paths = paths;
    this.#store = store;
    this.#env = env;
    this.#ownerToken = fixedToken(env, OWNER_ENV) ?? readOrCreateSecret(paths.ownerToken, newToken);
  }

  /** Owner `owner`'s token, in the clear (for the login URL printed at start and by `token owner`). */
  get ownerToken(): string {
    return this.#ownerToken;
  }

  /**
   * At start: client `local`'s and owner `owner`'s stored hashes follow mcp.token / OGF_BROKER_MCP_TOKEN
   * and owner.token / OGF_BROKER_OWNER_TOKEN (created or replaced, audited). A token already held by another
   * client or owner is refused (exit 2) rather than stored twice.
   *
   * Contract 16, `shared` (several nodes on one database): a stored hash is never replaced from this data
   * dir — another node set it, or an owner rotated it there to shut a leaked token out, and a node starting
   * with the old file must not let it back in. A data dir whose token differs exits 2 saying how to join.
   */
  async refreshAtStart(shared = false): Promise<void> {
    const at = iso(Date.now());
    const local = hashToken(this.localMcpToken());
    const stored = this.#store.clientTokenHash(LOCAL_CLIENT);
    if (shared && stored !== undefined && stored !== local)
      throw this.#notJoined(this.#mcpSource(), 'client local');
    const ownerStored = this.#store.ownerTokenHash(FIRST_OWNER);
    if (shared && ownerStored !== undefined && ownerStored !== hashToken(this.#ownerToken))
      throw this.#notJoined(this.#ownerSource(), `owner ${FIRST_OWNER}`);
    if (stored !== local) {
      const holder = this.#store.clientByTokenHash(local);
      if (holder !== undefined) {
        throw new UsageError(
          `${this.#mcpSource()}: client local's MCP token equals client ${holder}'s; rotate that client's: ogf-broker token mcp --client ${holder} --rotate`,
        );
      }
      await this.#store.setClientTokenHash(LOCAL_CLIENT, local, at, DAEMON);
    }
    const owner = hashToken(this.#ownerToken);
    if (this.#store.ownerTokenHash(FIRST_OWNER) !== owner) {
      const holder = this.#store.ownerByTokenHash(owner);
      if (holder !== undefined) {
        throw new UsageError(
          `${this.#ownerSource()}: owner ${FIRST_OWNER}'s token equals owner ${holder}'s; rotate that owner's: ogf-broker token owner --name ${holder} --rotate`,
        );
      }
      await this.#store.setOwnerTokenHash(FIRST_OWNER, owner, at, DAEMON, { via: 'start' });
    }
  }

  #notJoined(source: string, who: string): UsageError {
    return new UsageError(
      `${source}: ${who}'s token on this shared database differs from this data dir's (another node set it, or it was rotated there); copy owner.token and mcp.token from a node's data dir into this one, or give every node the same OGF_BROKER_OWNER_TOKEN and OGF_BROKER_MCP_TOKEN (docs/fleet.md, adding a machine)`,
    );
  }

  #ownerSource(): string {
    return fixedToken(this.#env, OWNER_ENV) !== undefined ? OWNER_ENV : 'owner.token';
  }

  #mcpSource(): string {
    return fixedToken(this.#env, MCP_ENV) !== undefined ? MCP_ENV : 'mcp.token';
  }

  /**
   * Refuses an owner token that is also some client's MCP token (contract 1.1 v2) — for every owner: the
   * AI holding that MCP token could then open the owner WebSocket and approve its own commands. Only equal
   * fixed tokens (or a token copied between files) can cause it — generated ones are 256 random bits and
   * checked against every known token. Compares hashes, as the store keeps tokens only as hashes. `start`
   * calls this; the `token` commands do not, so rotating one of the two stays available as the fix.
   */
  assertDistinct(): void {
    for (const [name, hash] of this.#store.owners()) {
      const client = this.#store.clientByTokenHash(hash);
      if (client === undefined) continue;
      const owner = name === FIRST_OWNER ? this.#ownerSource() : `owner ${name}`;
      const fix =
        client !== LOCAL_CLIENT
          ? `rotate that client's: ogf-broker token mcp --client ${client} --rotate`
          : name !== FIRST_OWNER
            ? `rotate the owner's: ogf-broker token owner --name ${name} --rotate`
            : fixedToken(this.#env, MCP_ENV) !== undefined
              ? 'set OGF_BROKER_OWNER_TOKEN and OGF_BROKER_MCP_TOKEN to different values'
              : 'rotate the MCP token: ogf-broker token mcp --rotate';
      throw new UsageError(
        `${owner}: the owner token must differ from every MCP token, but it equals client ${client}'s; ${fix}`,
      );
    }
  }

  /** Client `local`'s MCP token (fixed by OGF_BROKER_MCP_TOKEN, else mcp.token, created when absent). */
  localMcpToken(): string {
    return fixedToken(this.#env, MCP_ENV) ?? readOrCreateSecret(this.#paths.mcpToken, newToken);
  }

  /**
   * The owner a token belongs to (contract 9), or undefined. Compares SHA-256 hashes through the store's
   * unique index, never clear tokens, so the time it takes says nothing about the token's characters.
   */
  ownerByToken(candidate: string): OwnerCredential | undefined {
    if (candidate.length < 16 || candidate.length > 512) return undefined;
    const hash = hashToken(candidate);
    const name = this.#store.ownerByTokenHash(hash);
    return name === undefined ? undefined : { name, hash };
  }

  /**
   * Owner `name`'s current credential (contract 13.3: a passkey sign-in opens a session as its owner, bound
   * to that owner's token of the moment, so a rotation ends it like any other), or undefined.
   */
  ownerCredential(name: string): OwnerCredential | undefined {
    const hash = this.#store.ownerTokenHash(name);
    return hash === undefined ? undefined : { name, hash };
  }

  /** True while `cred`'s token is still its owner's (no rotation since it was checked). */
  isCurrent(cred: OwnerCredential): boolean {
    return this.#store.ownerTokenHash(cred.name) === cred.hash;
  }

  /**
   * A check of credentials against the owners as they are now (one read of the small owners table), for
   * re-checking every session and socket at once after a rotation.
   */
  credentialCheck(): (cred: OwnerCredential) => boolean {
    const owners = this.#store.owners();
    return (cred) => owners.get(cred.name) === cred.hash;
  }

  /**
   * Calls `listener` after another process committed to the store (a `token` command may have rotated an
   * owner): the store's change feed (core/ports/store.ts ChangeFeed). The caller then re-checks every credential
   * it holds. Returns the function that stops it.
   */
  onStoreChange(listener: () => void): () => void {
    return this.#store.subscribe(() => listener());
  }

  /** The client a bearer MCP token belongs to, or undefined. Compares hashes, never clear tokens. */
  mcpClient(candidate: string): string | undefined {
    if (candidate.length < 16 || candidate.length > 512) return undefined;
    return this.#store.clientByTokenHash(hashToken(candidate));
  }

  /** True when a token's hash is already some owner's or client's (the files' tokens included). */
  #taken(hash: string): boolean {
    if (this.#store.clientByTokenHash(hash) !== undefined) return true;
    if (this.#store.ownerByTokenHash(hash) !== undefined) return true;
    if (hash === hashToken(this.#ownerToken)) return true;
    const local = fixedToken(this.#env, MCP_ENV) ?? readSecretIfPresent(this.#paths.mcpToken);
    return local !== undefined && hash === hashToken(local);
  }

  /**
   * A new token equal to no owner's and no client's (contract 1.1 v2: an owner token must differ from every
   * MCP token, and a new MCP token from every owner token). 256 random bits make a repeat moot, but the
   * check is cheap.
   */
  #freshToken(): string {
    for (;;) {
      const token = newToken();
      if (!this.#taken(hashToken(token))) return token;
    }
  }

  /**
   * `token mcp [--client NAME] [--rotate]`: returns the token to print. Client `local` keeps its token in
   * mcp.token; any other client's token is shown once, when created or rotated, and kept only as a hash.
   */
  async mcpTokenFor(name: string, rotate: boolean, actor: string): Promise<string> {
    checkClientName(name);
    if (name === LOCAL_CLIENT) {
      if (rotate) {
        if (fixedToken(this.#env, MCP_ENV) !== undefined) {
          throw new UsageError(
            '--rotate: client local is fixed by OGF_BROKER_MCP_TOKEN; change that variable instead',
          );
        }
        const token = this.#freshToken();
        writeSecretAtomically(this.#paths.mcpToken, token);
        await this.#store.setClientTokenHash(LOCAL_CLIENT, hashToken(token), iso(Date.now()), {
          kind: 'owner',
          name: actor,
        });
        return token;
      }
      return this.localMcpToken();
    }
    // Contract 15: a name an OAuth connection acts as is that connection's; a token of the same name would
    // see its commands.
    if ((await this.#store.oauthClientNames()).has(name)) {
      throw new UsageError(
        `--client ${name}: that name belongs to a connected OAuth client; disconnect it in the panel first, or choose another name`,
      );
    }
    if (!rotate && this.#store.clientTokenHash(name) !== undefined) {
      throw new UsageError(
        `--client ${name}: that client's token exists and is kept only as a hash; pass --rotate to replace it and print the new one`,
      );
    }
    const token = this.#freshToken();
    await this.#store.setClientTokenHash(name, hashToken(token), iso(Date.now()), {
      kind: 'owner',
      name: actor,
    });
    return token;
  }

  /**
   * `token owner [--name NAME] [--rotate]` (contracts.md 1.1, 9): the token whose login URL to print.
   * Owner `owner` keeps its token in owner.token, so its URL can be printed at any time; a rotation
   * rewrites that file atomically (before the store, so a crash in between never revives the old token).
   * Any other owner's token is shown once, when created or rotated, and kept only as a hash: asking again
   * for an existing one is refused (exit 2) and points to `--rotate`. Creations and rotations are audited.
   * A rotation also removes the owner's passkeys (contract 13.3: the recovery of an owner who lost them;
   * it approves nothing by itself, and ends every session of that owner).
   */
  async ownerTokenFor(
    name: string,
    rotate: boolean,
    actor: string,
  ): Promise<{ token: string; outcome: OwnerTokenOutcome }> {
    checkOwnerName(name);
    const by: Actor = { kind: 'owner', name: actor };
    if (name === FIRST_OWNER) {
      if (!rotate) return { token: this.#ownerToken, outcome: 'existing' };
      if (fixedToken(this.#env, OWNER_ENV) !== undefined) {
        throw new UsageError(
          `--rotate: owner ${FIRST_OWNER} is fixed by ${OWNER_ENV}; change that variable instead`,
        );
      }
      const token = this.#freshToken();
      writeSecretAtomically(this.#paths.ownerToken, token);
      this.#ownerToken = token;
      await this.#store.setOwnerTokenHash(FIRST_OWNER, hashToken(token), iso(Date.now()), by);
      await this.#store.forgetPasskeys(FIRST_OWNER, iso(Date.now()), by);
      return { token, outcome: 'rotated' };
    }
    const exists = this.#store.ownerTokenHash(name) !== undefined;
    if (exists && !rotate) {
      throw new UsageError(
        `--name ${name}: that owner exists and its token is kept only as a hash, so its login URL cannot be shown again; pass --rotate to replace it (its sessions end) and print a new one`,
      );
    }
    const token = this.#freshToken();
    await this.#store.setOwnerTokenHash(name, hashToken(token), iso(Date.now()), by);
    // Contract 13.3 recovery: an owner who lost every passkey rotates and adds new ones from a token login.
    if (exists) await this.#store.forgetPasskeys(name, iso(Date.now()), by);
    return { token, outcome: exists ? 'rotated' : 'created' };
  }
}
