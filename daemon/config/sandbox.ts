/**
 * Confinement in the config (contract 21): `"sandbox": {"writable": [...], "network": false}` on a catalog
 * command or a stdio upstream, `"sandbox_default"` for every one without its own, and `"sandbox": false` on
 * an entry to run it unconfined although a default is set. Paths are absolute (`~` and `~/…` expanded to the
 * home directory) and normalised. Each entry's effective confinement is resolved once, at load
 * (`confinementOf`): what runs it (daemon/sandbox/) reads only that.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, normalize } from 'node:path';
import { z } from 'zod';

/** What a confined process may touch: the writable paths; the network only when `network`. */
export interface Confinement {
  writable: readonly string[];
  network: boolean;
}

const WRITABLE_MAX = 64;

function expanded(p: string): string {
  if (p === '~') return homedir();
  if (p.startsWith('~/')) return join(homedir(), p.slice(2));
  return p;
}

const writablePath = z
  .string('must be a path')
  .min(1, 'must be a non-empty path')
  .transform(expanded)
  .refine(isAbsolute, 'must be an absolute path (or start with ~/)')
  .refine((p) => !p.includes('\0'), 'must not contain NUL')
  .transform((p) => normalize(p).replace(/(.)\/+$/, '$1'));

export const sandboxSchema = z.strictObject({
  writable: z.array(writablePath).max(WRITABLE_MAX, `must list at most ${WRITABLE_MAX} paths`).default([]),
  network: z.boolean('must be true or false').default(false),
});

/** An entry's own setting: a sandbox, or `false` (unconfined whatever `sandbox_default` says). */
export const entrySandboxSchema = z.union([z.literal(false), sandboxSchema], {
  error: 'must be {"writable": [paths], "network": true|false} or false',
});

/** The confinement an entry runs under: its own, else the default; none when it says `false` or neither is set. */
export function confinementOf(
  own: Confinement | false | undefined,
  fallback: Confinement | null,
): Confinement | undefined {
  if (own === false) return undefined;
  return own ?? fallback ?? undefined;
}

/** How the owner is told the reach (contract 21): "confined: writes only under /a; no network" or "not confined". */
export function describeConfinement(c: Confinement | undefined): string {
  if (c === undefined) return 'not confined';
  const writes = c.writable.length === 0 ? 'writes nowhere' : `writes only under ${c.writable.join(', ')}`;
  return `confined: ${writes}; ${c.network ? 'network allowed' : 'no network'}`;
}
