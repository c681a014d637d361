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
import { ACTIVE_STATES, FINAL_STATES, inList, PASSKEY_ACTIONS, RULE_DECIDED_WHERE } from '../rules/index.js';

/** The channel every row change is announced on (payload: {"t": table, "k": key, "w": writer}). */
export const CHANNEL = 'ogf_broker';

/** The advisory lock key migrations hold (any constant: it only has to be the same for every daemon). */
const MIGRATION_LOCK = 7_146_027;

export const MIGRATIONS: readonly string[] = [
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
   CREATE INDEX commands_active ON commands(state) WHERE state IN ${inList(ACTIVE_STATES)};
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
  // Contract 14 (v3): the hash chain, as broker.db's (store/sqlite/schema.ts). `entry` is the canonical JSON
  // of the contract's entry without its hash (the bytes hashed), `hash` its SHA-256; `seq` is no longer an
  // identity (a rolled-back insert left a gap in it): the appending transaction gives it, from the one row
  // of `audit_tail` it locks (transaction.ts), so seqs have no gaps and the chain never forks across
  // daemons. Rows written before are renumbered 1…n in their order (never chained, so no hash names their
  // seq) and chained at the first start (chain.ts), the one update the trigger lets through: a row
  // without a hash may gain its entry and hash, nothing else. Checkpoints are append-only the same way.
  `ALTER TABLE audit ALTER COLUMN seq DROP IDENTITY IF EXISTS;
   ALTER TABLE audit ADD COLUMN entry text;
   ALTER TABLE audit ADD COLUMN hash text;
   DROP TRIGGER audit_no_change ON audit;
   UPDATE audit SET seq = -r.n FROM (SELECT seq AS old, row_number() OVER (ORDER BY seq) AS n FROM audit) r
     WHERE audit.seq = r.old;
   UPDATE audit SET seq = -seq;
   CREATE FUNCTION ogf_audit_chain_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF OLD.hash IS NULL AND NEW.hash IS NOT NULL AND NEW.entry IS NOT NULL
         AND (NEW.seq, NEW.at, NEW.actor_kind, NEW.actor, NEW.action, NEW.command_id, NEW.version, NEW.detail)
           IS NOT DISTINCT FROM
             (OLD.seq, OLD.at, OLD.actor_kind, OLD.actor, OLD.action, OLD.command_id, OLD.version, OLD.detail)
       THEN RETURN NEW; END IF;
       RAISE EXCEPTION 'the audit log is append-only';
     END $$;
   CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
     FOR EACH ROW EXECUTE FUNCTION ogf_audit_chain_only();
   CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
     FOR EACH ROW EXECUTE FUNCTION ogf_append_only();
   CREATE INDEX audit_at ON audit(at);
   CREATE TABLE audit_tail (
     id integer PRIMARY KEY CHECK (id = 1),
     seq bigint NOT NULL,
     hash text NOT NULL
   );
   INSERT INTO audit_tail (id, seq, hash) VALUES (1, 0, '${'0'.repeat(64)}');
   CREATE TABLE audit_checkpoints (
     seq bigint PRIMARY KEY,
     hash text NOT NULL,
     at text NOT NULL,
     signature text NOT NULL
   );
   CREATE FUNCTION ogf_checkpoints_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'checkpoints are append-only'; END $$;
   CREATE TRIGGER audit_checkpoints_no_change BEFORE UPDATE OR DELETE ON audit_checkpoints
     FOR EACH ROW EXECUTE FUNCTION ogf_checkpoints_append_only();
   CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
     FOR EACH STATEMENT EXECUTE FUNCTION ogf_checkpoints_append_only();`,
  // Contract 14 (v3): the panel's history search (search.ts), served by indexes. `search_text` holds the
  // text broker.db's `commands_search` does — command, client, arguments (their first 4 KiB of JSON, as
  // written), justification, decider and notes — kept by a trigger; a pg_trgm GIN index finds any
  // substring of 3 characters or more with ILIKE. pg_trgm is in PostgreSQL's contrib and trusted (a
  // database owner may create it); where it cannot be created, the search still answers, by reading rows
  // in PostgreSQL (docs/fleet.md).
  `DO $$ BEGIN
     CREATE EXTENSION IF NOT EXISTS pg_trgm;
   EXCEPTION WHEN OTHERS THEN
     RAISE NOTICE 'pg_trgm cannot be created (%): the history search reads rows', SQLERRM;
   END $$;
   ALTER TABLE commands ADD COLUMN search_text text;
   CREATE FUNCTION ogf_search_text(b json) RETURNS text LANGUAGE sql IMMUTABLE AS $$
     SELECT concat_ws(E'\n', b->>'command', b->>'client', left((b->'args')::text, 4096), b->>'justification',
       b#>>'{phase,decided_by}', b#>>'{phase,owner_note}',
       (SELECT string_agg(r->>'note', E'\n') FROM json_array_elements(
          CASE WHEN json_typeof(b#>'{phase,reconciliations}') = 'array' THEN b#>'{phase,reconciliations}'
          ELSE '[]'::json END) r))
   $$;
   CREATE FUNCTION ogf_commands_search() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN NEW.search_text := ogf_search_text(NEW.body::json); RETURN NEW; END $$;
   CREATE TRIGGER commands_search BEFORE INSERT OR UPDATE OF body ON commands
     FOR EACH ROW EXECUTE FUNCTION ogf_commands_search();
   UPDATE commands SET search_text = ogf_search_text(body::json);
   DO $$ BEGIN
     IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
       EXECUTE 'CREATE INDEX commands_search_trgm ON commands USING gin (search_text gin_trgm_ops)';
     END IF;
   END $$;
   CREATE INDEX commands_state_seq ON commands(state, seq);
   CREATE INDEX commands_client_seq ON commands(client, seq);`,
  // Contract 15 (v3): OAuth (store/sqlite/schema.ts's tables: token hashes only, never a code); contract
  // 13.3: owners' passkeys, public data only; contract 13.2: Web Push subscriptions, one owner per endpoint.
  `CREATE TABLE oauth_clients (
     client_id text PRIMARY KEY,
     client_name text NOT NULL,
     redirect_uris text NOT NULL,
     created_at text NOT NULL
   );
   CREATE INDEX oauth_clients_created ON oauth_clients(created_at);
   CREATE TABLE oauth_connections (
     id text PRIMARY KEY,
     client_name text NOT NULL,
     client_id text NOT NULL,
     client_host text NOT NULL,
     redirect_host text NOT NULL,
     connected_at text NOT NULL,
     last_used_at text NOT NULL,
     revoked_at text
   );
   CREATE TABLE oauth_tokens (
     hash text PRIMARY KEY,
     connection_id text NOT NULL REFERENCES oauth_connections(id),
     kind text NOT NULL,
     state text NOT NULL,
     expires_at text NOT NULL
   );
   CREATE INDEX oauth_tokens_connection ON oauth_tokens(connection_id);
   CREATE TABLE passkeys (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     credential_id text NOT NULL UNIQUE,
     owner text NOT NULL,
     public_key text NOT NULL,
     rp_id text NOT NULL,
     counter bigint NOT NULL,
     transports text,
     created_at text NOT NULL,
     last_used_at text
   );
   CREATE INDEX passkeys_owner ON passkeys(owner, seq);
   CREATE TABLE push_subscriptions (
     endpoint text PRIMARY KEY,
     owner text NOT NULL,
     body text NOT NULL,
     created_at text NOT NULL
   );
   CREATE INDEX push_subscriptions_owner ON push_subscriptions(owner);`,
  // Contract 16 (v3): nodes. Each command names the node that received it (`node`, also in its body); rows
  // written before are claimed by the first node to start (nodes.ts). `nodes` is the live-node registry:
  // a row per name, its heartbeat moved by the database's clock (so machines' clocks never matter), its
  // audit public key (checkpoints of every node verify from any node, docs/fleet.md).
  `ALTER TABLE commands ADD COLUMN node text;
   CREATE INDEX commands_node_active ON commands(node, seq)
     WHERE state IN ${inList(ACTIVE_STATES)};
   CREATE TABLE nodes (
     name text PRIMARY KEY,
     host text NOT NULL,
     pid integer NOT NULL,
     version text NOT NULL,
     started_at timestamptz NOT NULL,
     heartbeat_at timestamptz NOT NULL,
     stopped_at timestamptz,
     audit_public_key text
   );`,
  // Contract 15 (v4): store/sqlite/schema.ts's `completed_at` of DCR registrations (only those the owner
  // allowed count toward the daily cap) and connections by name (what a name inherits).
  `ALTER TABLE oauth_clients ADD COLUMN completed_at text;
   UPDATE oauth_clients SET completed_at = created_at
     WHERE client_id IN (SELECT client_id FROM oauth_connections);
   CREATE INDEX oauth_clients_completed ON oauth_clients(completed_at);
   CREATE INDEX oauth_connections_name ON oauth_connections(client_name);`,
  // Contract 11 (v4): the Allow… dialog's test against the past reads the newest commands of one command
  // name (search.ts). A column PostgreSQL keeps from the body (a command never changes its name), and an
  // index on it in seq order.
  `ALTER TABLE commands ADD COLUMN command text GENERATED ALWAYS AS ((body::json) ->> 'command') STORED;
   CREATE INDEX commands_command_seq ON commands(command, seq);`,
  // Contract 16 (v4), issue 35 finding 4. Grants name their node: one stored before takes the node of the
  // command whose approval made it (its grant_created entry names the command); the rest are adopted by
  // the first node to start (nodes.ts), never `*` (docs/fleet.md). PENDING caps count every node's
  // commands: `pending_counts` holds each client's non-final commands and all of them (`*`, never a
  // client name), kept by a trigger on every insert, change of state and delete — whoever writes — so
  // the submit's insert checks the caps in its own statement (commands.ts), in the transaction that holds
  // the audit tail every writer takes first (transaction.ts): two nodes never both pass the last slot.
  // The lock first: a writer of an older version mid-transaction is waited for, never met in a deadlock.
  `LOCK TABLE commands IN SHARE ROW EXCLUSIVE MODE;
   UPDATE grants g SET body = jsonb_set(g.body::jsonb, '{node}', to_jsonb(c.node))::text, rev = g.rev + 1
     FROM audit a, commands c
     WHERE a.action = 'grant_created' AND a.detail IS NOT NULL AND g.body::jsonb->'node' IS NULL
       AND a.detail::jsonb->>'grant_id' = g.id
       AND c.id = coalesce(a.command_id, a.detail::jsonb->>'command_id') AND c.node IS NOT NULL;
   CREATE TABLE pending_counts (
     client text PRIMARY KEY,
     n integer NOT NULL
   );
   CREATE FUNCTION ogf_pending_count() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE d integer;
     BEGIN
       d := (CASE WHEN coalesce(NEW.state IN ${inList(ACTIVE_STATES)}, false) THEN 1 ELSE 0 END)
          - (CASE WHEN coalesce(OLD.state IN ${inList(ACTIVE_STATES)}, false) THEN 1 ELSE 0 END);
       IF d <> 0 THEN
         -- '*' first, then the client: every writer locks the two rows in one order.
         INSERT INTO pending_counts AS p (client, n) VALUES ('*', d)
           ON CONFLICT (client) DO UPDATE SET n = p.n + excluded.n;
         INSERT INTO pending_counts AS p (client, n) VALUES (coalesce(NEW.client, OLD.client), d)
           ON CONFLICT (client) DO UPDATE SET n = p.n + excluded.n;
       END IF;
       RETURN NULL;
     END $$;
   INSERT INTO pending_counts (client, n)
     SELECT client, count(*) FROM commands WHERE state IN ${inList(ACTIVE_STATES)} GROUP BY client;
   INSERT INTO pending_counts (client, n)
     SELECT '*', count(*) FROM commands WHERE state IN ${inList(ACTIVE_STATES)};
   CREATE TRIGGER commands_pending AFTER INSERT OR UPDATE OF state OR DELETE ON commands
     FOR EACH ROW EXECUTE FUNCTION ogf_pending_count();`,
  // Contract 13.3 (v4), as broker.db's (store/sqlite/schema.ts): each passkey the table holds is taken into
  // the chain with an add entry naming its public key, written after every row there is (older rows not
  // yet chained included) without a hash, and chained by chain.ts at this same start; the partial indexes
  // serve the read of those entries at each passkey approval and of the last `config_loaded` at each start.
  // Safe to run again (IF NOT EXISTS, NOT EXISTS), as broker.db's.
  `CREATE INDEX IF NOT EXISTS audit_passkeys ON audit(seq)
     WHERE action IN ${inList(PASSKEY_ACTIONS)};
   CREATE INDEX IF NOT EXISTS audit_config_loaded ON audit(seq) WHERE action = 'config_loaded';
   INSERT INTO audit (seq, at, actor_kind, actor, action, detail)
     SELECT (SELECT COALESCE(MAX(seq), 0) FROM audit) + row_number() OVER (ORDER BY p.seq),
       to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'daemon', 'daemon', 'passkey_added',
       json_build_object('owner', p.owner, 'credential_id', p.credential_id, 'public_key', p.public_key,
         'rp_id', p.rp_id, 'taken_at_upgrade', true)::text
     FROM passkeys p
     WHERE NOT EXISTS (SELECT 1 FROM audit a WHERE a.action = 'passkey_added'
       AND a.detail::json->>'credential_id' = p.credential_id AND a.detail::json->>'public_key' = p.public_key)
     ORDER BY p.seq;`,
  // Contract 12 (v4): a command that ends keeps no preview text (core/model/preview-end.ts); those that ended
  // before this version lose theirs here. Their preview_made audit entries keep the text's SHA-256.
  `UPDATE commands SET body = ((body::jsonb #- '{preview,diff}') #- '{preview,text}')::text
     WHERE state IN ${inList(FINAL_STATES)}
       AND (body::jsonb -> 'preview') ?| array['diff', 'text'];`,
  // Contract 19 (v4): a notification's one-time actions (store/sqlite/schema.ts says why each column).
  `CREATE TABLE IF NOT EXISTS actions (
     token_hash text PRIMARY KEY,
     command_id text NOT NULL,
     version integer NOT NULL,
     action text NOT NULL,
     owner text NOT NULL,
     channel text NOT NULL,
     expires_at text NOT NULL
   );
   CREATE INDEX IF NOT EXISTS actions_expires ON actions(expires_at);`,
  // Contract 18 (v4), as broker.db's (store/sqlite/schema.ts): the owners' rules and the partial index of the
  // audit rows with which a rule decided a request. Every change of a rule is announced on the feed (a
  // removal too: the key is the old row's), so every node reads the rules again.
  `CREATE TABLE IF NOT EXISTS owner_rules (
     id text PRIMARY KEY,
     pos integer NOT NULL,
     body text NOT NULL
   );
   CREATE INDEX IF NOT EXISTS owner_rules_pos ON owner_rules(pos);
   CREATE INDEX IF NOT EXISTS audit_rule_decided ON audit(actor) WHERE ${RULE_DECIDED_WHERE};
   CREATE OR REPLACE FUNCTION ogf_notify_rule() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE k text;
     BEGIN
       IF TG_OP = 'DELETE' THEN k := OLD.id; ELSE k := NEW.id; END IF;
       PERFORM pg_notify('${CHANNEL}', json_build_object('t', TG_TABLE_NAME, 'k', k,
         'w', current_setting('ogf.writer', true))::text);
       RETURN NULL;
     END $$;
   DROP TRIGGER IF EXISTS owner_rules_notify ON owner_rules;
   CREATE TRIGGER owner_rules_notify AFTER INSERT OR UPDATE OR DELETE ON owner_rules
     FOR EACH ROW EXECUTE FUNCTION ogf_notify_rule();`,
  // As broker.db's: every start's read of the entries not yet chained (chain.ts) reads an index of them,
  // empty but for what an upgrade left, instead of scanning the whole record.
  `CREATE INDEX IF NOT EXISTS audit_unchained ON audit(seq) WHERE hash IS NULL;`,
  // As broker.db's: `commands_state_seq` serves every read `commands_active` served (the active commands at
  // each start, the PENDING counts), and one index fewer is written at every submission and decision.
  `DROP INDEX IF EXISTS commands_active;`,
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
