/**
 * The terminal's way to the owner edge (contracts.md 1.1, 5, 9): finds the running daemon of a data dir,
 * reads the owner token, and connects as owner `owner` over the owner WebSocket, exactly as the panel does.
 * The commands that use it (list/approve/deny/reconcile, grant) are in ../commands/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerMessage } from '../../common/owner-messages.js';
import { sayError } from '../base/index.js';
import { resolveDataDir } from '../config/index.js';
import { OwnerClient, OwnerConnectError } from './client.js';

/** The running daemon's base URL from `<data-dir>/daemon.json`, or an OwnerConnectError. */
export function daemonUrl(dataDir: string): string {
  let text: string;
  try {
    text = readFileSync(join(dataDir, 'daemon.json'), 'utf8');
  } catch {
    throw new OwnerConnectError(
      `no daemon is running for data dir ${dataDir} (start one with: ogf-broker start)`,
    );
  }
  const url = (JSON.parse(text) as { url?: unknown }).url;
  if (typeof url !== 'string') throw new OwnerConnectError(`${join(dataDir, 'daemon.json')} has no url`);
  return url;
}

/** The token the terminal commands act with: owner `owner`'s (contract 9). */
export function ownerToken(dataDir: string, env: NodeJS.ProcessEnv): string {
  const fixed = env.OGF_BROKER_OWNER_TOKEN;
  if (fixed !== undefined && fixed !== '') return fixed;
  try {
    return readFileSync(join(dataDir, 'owner.token'), 'utf8').trim();
  } catch {
    throw new OwnerConnectError(
      `cannot read the owner token ${join(dataDir, 'owner.token')} (set OGF_BROKER_OWNER_TOKEN)`,
    );
  }
}

/**
 * Connects to the running daemon of `--data-dir` as owner `owner` (contract 9: the terminal acts as it),
 * runs `fn`, and always closes. No daemon, a refused token or a lost connection print `<label>: <why>` and
 * exit 1 — the same for every terminal owner command (list/approve/deny/reconcile and grant).
 */
export async function withOwnerClient(
  flags: ReadonlyMap<string, string | true>,
  env: NodeJS.ProcessEnv,
  label: string,
  fn: (client: OwnerClient) => Promise<number>,
): Promise<number> {
  const dataFlag = flags.get('--data-dir');
  const dataDir = resolveDataDir(typeof dataFlag === 'string' ? dataFlag : undefined, env);
  let client: OwnerClient | undefined;
  try {
    client = await OwnerClient.open(daemonUrl(dataDir), ownerToken(dataDir, env));
    return await fn(client);
  } catch (e) {
    if (e instanceof OwnerConnectError) {
      sayError(`${label}: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await client?.close();
  }
}

/**
 * Contract 17: what `doctor`, `notify test` and `reload` ask the running daemon of `dataDir` (its own environment,
 * channels and bridge). Undefined when no daemon runs there; a daemon that runs but cannot be asked
 * rejects with an OwnerConnectError saying why.
 */
export async function askRunningDaemon(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  frame: { type: 'doctor' } | { type: 'notify_test'; channel?: string } | { type: 'reload' },
): Promise<ServerMessage | undefined> {
  let url: string;
  try {
    url = daemonUrl(dataDir);
  } catch {
    return undefined;
  }
  const client = await OwnerClient.open(url, ownerToken(dataDir, env));
  try {
    return await client.request(frame, 60_000);
  } finally {
    await client.close();
  }
}
