/**
 * Owner and MCP client tokens (contracts.md 1.1, 1.2, 3). The owner token and client `local`'s MCP token
 * live in 0600 files (or come fixed from the environment); every client's token is checked through its
 * SHA-256 hash in the store, so other clients' tokens are never kept in the clear and a rotation made by
 * `ogf-broker token mcp --rotate` is honoured by a running daemon at once.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { renameSync } from 'node:fs';
import { iso } from './clock.js';
import type { Store } from './core/store.js';
import { type DataDir, newToken, readOrCreateSecret, writePrivateFileExclusive } from './datadir.js';
import { UsageError } from './errors.js';

export const LOCAL_CLIENT = 'local';
const CLIENT_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
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

function writeSecretAtomically(path: string, token: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writePrivateFileExclusive(tmp, `${token}\n`);
  renameSync(tmp, path);
}

export class Tokens {
  readonly #paths: DataDir;
  readonly #store: Store;
  readonly #env: NodeJS.ProcessEnv;
  readonly #ownerDigest: Buffer;
  readonly ownerToken: string;

  /** Loads the tokens, creating the owner and `local` tokens on first start (unless fixed by env). */
  constructor(paths: DataDir, store: Store, env: NodeJS.ProcessEnv = process.env) {
    this.#paths = paths;
    this.#store = store;
    this.#env = env;
    this.ownerToken =
      fixedToken(env, 'OGF_BROKER_OWNER_TOKEN') ?? readOrCreateSecret(paths.ownerToken, newToken);
    this.#ownerDigest = createHash('sha256').update(this.ownerToken).digest();
    const local = this.localMcpToken();
    const hash = hashToken(local);
    if (store.clientTokenHash(LOCAL_CLIENT) !== hash) {
      store.setClientTokenHash(LOCAL_CLIENT, hash, iso(Date.now()), { kind: 'daemon', name: 'daemon' });
    }
  }

  /**
   * Refuses an owner token that is also some client's MCP token (contract 1.1 v2): the AI holding that MCP
   * token could then open the owner WebSocket and approve its own commands. Only equal fixed tokens (or a
   * token copied between files) can cause it — generated ones are 256 random bits. Compares hashes, as the
   * store keeps other clients' tokens only as hashes. `start` calls this; the `token` commands do not, so
   * `token mcp --client NAME --rotate` stays available as the fix.
   */
  assertDistinct(): void {
    const client = this.#store.clientByTokenHash(hashToken(this.ownerToken));
    if (client === undefined) return;
    const owner =
      fixedToken(this.#env, 'OGF_BROKER_OWNER_TOKEN') !== undefined
        ? 'OGF_BROKER_OWNER_TOKEN'
        : 'owner.token';
    const fix =
      client !== LOCAL_CLIENT
        ? `rotate that client's: ogf-broker token mcp --client ${client} --rotate`
        : fixedToken(this.#env, 'OGF_BROKER_MCP_TOKEN') !== undefined
          ? 'set OGF_BROKER_OWNER_TOKEN and OGF_BROKER_MCP_TOKEN to different values'
          : 'rotate the MCP token: ogf-broker token mcp --rotate';
    throw new UsageError(
      `${owner}: the owner token must differ from every MCP token, but it equals client ${client}'s; ${fix}`,
    );
  }

  /** Client `local`'s MCP token (fixed by OGF_BROKER_MCP_TOKEN, else mcp.token, created when absent). */
  localMcpToken(): string {
    return (
      fixedToken(this.#env, 'OGF_BROKER_MCP_TOKEN') ?? readOrCreateSecret(this.#paths.mcpToken, newToken)
    );
  }

  /** Constant-time check of the owner token. */
  isOwnerToken(candidate: string): boolean {
    const digest = createHash('sha256').update(candidate).digest();
    return timingSafeEqual(digest, this.#ownerDigest);
  }

  /** The client a bearer MCP token belongs to, or undefined. Compares hashes, never clear tokens. */
  mcpClient(candidate: string): string | undefined {
    if (candidate.length < 16 || candidate.length > 512) return undefined;
    return this.#store.clientByTokenHash(hashToken(candidate));
  }

  /** A new MCP token; never the owner token (contract 1.1 v2; 256 random bits make a repeat moot, but cheap). */
  #freshToken(): string {
    for (;;) {
      const token = newToken();
      if (!this.isOwnerToken(token)) return token;
    }
  }

  /**
   * `token mcp [--client NAME] [--rotate]`: returns the token to print. Client `local` keeps its token in
   * mcp.token; any other client's token is shown once, when created or rotated, and kept only as a hash.
   */
  mcpTokenFor(name: string, rotate: boolean, actor: string): string {
    checkClientName(name);
    if (name === LOCAL_CLIENT) {
      if (rotate) {
        if (fixedToken(this.#env, 'OGF_BROKER_MCP_TOKEN') !== undefined) {
          throw new UsageError(
            '--rotate: client local is fixed by OGF_BROKER_MCP_TOKEN; change that variable instead',
          );
        }
        const token = this.#freshToken();
        writeSecretAtomically(this.#paths.mcpToken, token);
        this.#store.setClientTokenHash(LOCAL_CLIENT, hashToken(token), iso(Date.now()), {
          kind: 'owner',
          name: actor,
        });
        return token;
      }
      return this.localMcpToken();
    }
    if (!rotate && this.#store.clientTokenHash(name) !== undefined) {
      throw new UsageError(
        `--client ${name}: that client's token exists and is kept only as a hash; pass --rotate to replace it and print the new one`,
      );
    }
    const token = this.#freshToken();
    this.#store.setClientTokenHash(name, hashToken(token), iso(Date.now()), { kind: 'owner', name: actor });
    return token;
  }
}
