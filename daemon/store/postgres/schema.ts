/**
 * The PostgreSQL schema (contract 16): the same tables, columns and meaning as broker.db
 * (store/sqlite/schema.ts), in PostgreSQL's types, plus what a shared database needs: `rev` on the rows
 * the daemon keeps in memory (each write of a row raises it, so a late read never replaces a newer one:
 * mirror.ts), grants' `uses_left` as a column (the uses check of grants.ts is one statement), and triggers
 * that NOTIFY `ogf_broker` with the table and key of each changed row (the change feed, feed.ts).
 *
 * A schema change is a new string APPENDED to `MIGRATIONS`, like SQLite's (never edit an old one). The
 * applied versions are rows of `ogf_broker_migrations`; several daemons starting together migrate once
 * (an advisory lock held by the migrating transaction).
 */
import type { PoolClient } from 'pg';

/** The channel every row change is announced on (payload: {"t": table, "k": key, "w": writer}). */
export const CHANNEL = 'ogf_broker';

/** The advisory lock key migrations hold (any constant: it only has to be the same for every daemon). */
const MIGRATION_LOCK = 7_146_027;

const MIGRATIONS: readonly string[] = [
  // Contract 9 (v1 and v2 of broker.db in one): commands, the append-only audit log, MCP clients, grants,
  // owners. Times are ISO text, as in broker.db, so they compare the same way.
  `CREATE TABLE commands (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id text NOT NULL UNIQUE,
     client text NOT NULL,
     request_id text,
     state text NOT NULL,
     version integer NOT NULL,
     created_at text NOT NULL,
     body text NOT NULL,
     task smallint
   );
   CREATE UNIQUE INDEX commands_request ON commands(client, request_id) WHERE request_id IS NOT NULL;
   CREATE INDEX commands_active ON commands(state) WHERE state IN ('awaiting_review','approved','running');
   CREATE INDEX commands_client_tasks ON commands(client, seq) WHERE task IS NOT NULL;
   CREATE INDEX commands_created ON commands(created_at);
   CREATE TABLE audit (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     at text NOT NULL,
     actor_kind text NOT NULL,
     actor text NOT NULL,
     action text NOT NULL,
     command_id text,
     version integer,
     detail text
   );
   CREATE INDEX audit_command ON audit(command_id);
   CREATE FUNCTION ogf_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
   CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit
     FOR EACH ROW EXECUTE FUNCTION ogf_append_only();
   CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
     FOR EACH STATEMENT EXECUTE FUNCTION ogf_append_only();
   CREATE TABLE mcp_clients (
     name text PRIMARY KEY,
     token_hash text NOT NULL UNIQUE,
     created_at text NOT NULL,
     rev bigint NOT NULL DEFAULT 1
   );
   CREATE TABLE grants (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id text NOT NULL UNIQUE,
     state text NOT NULL,
     body text NOT NULL,
     uses_left integer,
     rev bigint NOT NULL DEFAULT 1
   );
   CREATE INDEX grants_live ON grants(state) WHERE state = 'live';
   CREATE TABLE owners (
     name text PRIMARY KEY,
     token_hash text NOT NULL UNIQUE,
     created_at text NOT NULL,
     rev bigint NOT NULL DEFAULT 1
   );
   CREATE FUNCTION ogf_notify_id() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_notify('${CHANNEL}', json_build_object('t', TG_TABLE_NAME, 'k', NEW.id,
         'w', current_setting('ogf.writer', true))::text);
       RETURN NULL;
     END $$;
   CREATE FUNCTION ogf_notify_name() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_notify('${CHANNEL}', json_build_object('t', TG_TABLE_NAME, 'k', NEW.name,
         'w', current_setting('ogf.writer', true))::text);
       RETURN NULL;
     END $$;
   CREATE TRIGGER commands_notify AFTER INSERT OR UPDATE ON commands
     FOR EACH ROW EXECUTE FUNCTION ogf_notify_id();
   CREATE TRIGGER grants_notify AFTER INSERT OR UPDATE ON grants
     FOR EACH ROW EXECUTE FUNCTION ogf_notify_id();
   CREATE TRIGGER owners_notify AFTER INSERT OR UPDATE ON owners
     FOR EACH ROW EXECUTE FUNCTION ogf_notify_name();
   CREATE TRIGGER mcp_clients_notify AFTER INSERT OR UPDATE ON mcp_clients
     FOR EACH ROW EXECUTE FUNCTION ogf_notify_name();`,
];

/** How many migrations this build knows (the newest schema version). */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to the newest schema in one transaction (PostgreSQL's DDL is transactional): all
 * of it or none. Refuses a database migrated by a newer build (its tables may mean more than we know).
 */
export async function migrate(client: PoolClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS ogf_broker_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM ogf_broker_migrations',
    );
    const current = rows[0]?.v ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `the database's schema is version ${current}, newer than this ogf-broker knows (${MIGRATIONS.length}); upgrade this daemon`,
      );
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      await client.query(MIGRATIONS[v]!);
      await client.query('INSERT INTO ogf_broker_migrations (version) VALUES ($1)', [v + 1]);
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  }
}
