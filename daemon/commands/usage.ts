/**
 * What `ogf-broker help`, `ogf-broker --help` and `ogf-broker <command> --help` print (contract 17): the
 * commands, then one command's usage with every flag on a line of its own. Kept beside the commands, read by
 * cli.ts without loading any of them (a `--help` must work where the daemon could not start).
 */

/** Flags every command that reads a data dir takes. */
const DATA_DIR =
  '  --data-dir D        the data dir (env OGF_BROKER_DATA_DIR; default ~/.local/state/ogf-broker)';

export const COMMANDS: Record<string, string> = {
  start: `usage: ogf-broker start [flags]
runs the daemon in the foreground (SIGTERM/SIGINT stop it cleanly; SIGHUP reloads the config)
${DATA_DIR}
  --host H            a loopback address to listen on: 127.0.0.1, ::1 or localhost (env OGF_BROKER_HOST)
  --port P            the port, 0 for a free one (env OGF_BROKER_PORT; default 7719)
  --config F          the config file (env OGF_BROKER_CONFIG; default <data-dir>/config.json)`,
  'mcp-stdio': `usage: ogf-broker mcp-stdio [flags]
an MCP server on stdin/stdout forwarding to the daemon of the data dir (started if none runs), as client local
${DATA_DIR}`,
  status: `usage: ogf-broker status [flags]
whether a daemon runs, its URLs, counts by state, upstreams, rules, channels; exit 0 running, 1 not
${DATA_DIR}`,
  list: `usage: ogf-broker list [flags]
the commands waiting for you, with their previews
${DATA_DIR}
  --all               also the finished ones`,
  approve: `usage: ogf-broker approve ID [flags]
approves a waiting command as owner \`owner\`
${DATA_DIR}`,
  deny: `usage: ogf-broker deny ID [flags]
denies a waiting command
${DATA_DIR}
  --note TEXT         a note the AI receives as owner_note`,
  reconcile: `usage: ogf-broker reconcile ID --outcome delivered|not_delivered [flags]
records what really happened to a command that ended ERROR or UNKNOWN
${DATA_DIR}
  --outcome O         delivered or not_delivered
  --note TEXT         what you found`,
  revert: `usage: ogf-broker revert ID [flags]
takes back a succeeded file write: queues owner \`owner\`'s command writing the file's previous content
(approved by this, unless it needs a passkey); NotRevertible when the file changed since or was new
${DATA_DIR}`,
  grant: `usage: ogf-broker grant list|add|revoke [flags]
the owners' grants: "yes again" for a while
  grant list [--all]                 live grants (--all: ended ones too)
  grant add --command C --client NAME|* --ttl-s N [--args JSON | --when EXPR] [--uses N] [--note T] [--node N|*]
  grant revoke ID
${DATA_DIR}
  --all               (list) ended grants too
  --command C         (add) a catalog command or an upstream tool (notes__write_file)
  --client NAME       (add) one client name, or * for every client
  --args JSON         (add) only these exact arguments
  --when EXPR         (add) only requests for which this CEL expression is true
  --ttl-s N           (add) seconds it lives, 60..2592000
  --uses N            (add) how many approvals it may give, 1..10000
  --note T            (add) a note
  --node NAME|*       (add) the node whose commands it approves (default this daemon's; * for every node)`,
  rule: `usage: ogf-broker rule list|add|remove|disable [flags]
the owners' rules, kept in the database (every node shares them), evaluated after the config's
  rule list                          every rule: id, source, decision, enabled, expression
  rule add --when EXPR --decision allow|deny|ask [--note T] [--id ID]
  rule remove ID
  rule disable ID
${DATA_DIR}
  --when EXPR         (add) a CEL expression over the request (docs/rules.md)
  --decision D        (add) allow, deny or ask
  --note T            (add) a note (a deny's is what the AI reads)
  --id ID             (add) the rule's id (default one is made)`,
  token: `usage: ogf-broker token owner|mcp [flags]
prints an owner's login URL or a client's MCP token (the last line of stdout), creating it if absent
${DATA_DIR}
  --name NAME         (owner) the owner, default owner
  --client NAME       (mcp) the client, default local
  --rotate            replace it and revoke the old one`,
  policy: `usage: ogf-broker policy test [flags]
every rule of a config against the recorded history
${DATA_DIR}
  --config F          the config whose rules to test (default the daemon's)
  --limit N           how many of the newest commands, 1..5000 (default 500)`,
  notify: `usage: ogf-broker notify test [flags]
sends a test message through each notification channel; exit 0 only if all accepted it
${DATA_DIR}
  --config F          the config (default the daemon's)
  --channel ID        only this channel`,
  audit: `usage: ogf-broker audit key|verify|export [flags]
the tamper-evident audit record
  audit key                          prints the public key checkpoints are signed with
  audit verify [--data-dir D | --file EXPORT] [--pub FILE] [--key FILE]…
  audit export [--since T] [--until T] [--command ID] [--format jsonl|csv]
${DATA_DIR}
  --file EXPORT       (verify) an export instead of the data dir
  --pub FILE          (verify) your copy of \`audit key\`: checkpoints must be signed by it
  --key FILE          (verify) another node's public key to trust (repeatable)
  --since T           (export) from this ISO-8601 time
  --until T           (export) to this ISO-8601 time
  --command ID        (export) one command's entries
  --format F          (export) jsonl (default) or csv`,
  doctor: `usage: ogf-broker doctor [flags]
checks the data dir, port, config, the avatar app and every upstream; one line per check
${DATA_DIR}
  --host H            the host to check
  --port P            the port to check
  --config F          the config to check`,
  reload: `usage: ogf-broker reload [flags]
the running daemon reads its config again (as SIGHUP does); prints what applied, what needs a restart, or the error
${DATA_DIR}`,
  init: `usage: ogf-broker init [flags]
writes a starter config.json: the filesystem server over a folder, reads allowed, drafts/ writable, the rest asked
${DATA_DIR}
  --folder DIR        the folder the AI works in (default ~/ogf-notes, created with drafts/)`,
  backup: `usage: ogf-broker backup FILE [flags]
writes one 0600 archive of the data dir (a consistent copy of broker.db, config, keys, tokens), daemon running or not
${DATA_DIR}`,
  restore: `usage: ogf-broker restore FILE --data-dir D
fills an empty data dir from a backup archive
${DATA_DIR}`,
  service: `usage: ogf-broker service install|uninstall [flags]
a systemd user unit (~/.config/systemd/user/ogf-broker.service) that runs \`start\` for the data dir
  service install                    writes the unit and prints the systemctl --user lines that enable it
  service uninstall                  removes it
${DATA_DIR}`,
};

/** The command list (`ogf-broker help`). */
export function overview(): string {
  const lines = Object.values(COMMANDS).map((u) => {
    const [first = '', second = ''] = u.split('\n');
    return `  ${first.replace(/^usage: ogf-broker /, '').padEnd(58)} ${second}`;
  });
  return [
    'usage: ogf-broker <command> [flags]   (ogf-broker <command> --help: its flags; --version: the version)',
    ...lines,
  ].join('\n');
}
