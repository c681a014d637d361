/**
 * Contract 16: the shared PostgreSQL. `OGF_BROKER_DATABASE_URL`, or config `database_url_from_env` naming
 * the variable that holds the URL (so the file never holds the password). Absent: the embedded SQLite.
 * A URL is never echoed in an error (it may hold a password): the error names the variable.
 */
import { z } from 'zod';
import { UsageError } from '../base/index.js';

export const DATABASE_ENV = 'OGF_BROKER_DATABASE_URL';

/** `database_url_from_env`: an environment variable's name. */
export const databaseUrlFromEnvSchema = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]{0,127}$/,
    'must name an environment variable, such as OGF_BROKER_DATABASE_URL',
  );

/** The database URL the daemon uses, or null for the embedded SQLite; a bad one exits 2 naming its source. */
export function databaseUrl(fromEnv: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const source = fromEnv ?? DATABASE_ENV;
  const value = env[source];
  if (value === undefined || value === '') {
    if (fromEnv === undefined) return null;
    throw new UsageError(
      `database_url_from_env: names ${fromEnv}, which is not set in the daemon's environment; set it to a postgres:// URL or remove the field`,
    );
  }
  let ok = false;
  try {
    const u = new URL(value);
    ok = (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== '';
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new UsageError(
      `${source}: must be a postgres:// or postgresql:// URL with a host (postgres://user:password@host:5432/db), got a value that is not (not shown: it may hold a password)`,
    );
  }
  return value;
}
