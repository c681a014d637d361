/**
 * The requirements map (issue 6 item 1): one id per numbered rule of the contract's section 2 and per
 * security or robustness promise the product makes. `requirements.test.ts` fails when an id is cited by
 * no test, or when a test cites an id that is not here.
 *
 * AN ID SAYS WHERE ITS PROMISE IS WRITTEN (issue 37 item 7): `c<section>.<name>`, the contract section
 * that makes the promise (a subsection where it has them: 1.1, 3.2, 13.1) and a short name —
 * `c2.rule-5` is rule 5 of section 2, `c11.path-under` a promise of section 11 (rules), `c13.1.once` one of
 * 13.1 (notifications). A promise several sections touch is filed under the one that states it; `source`
 * names the others. docs/reliability.md's tables are grouped by these sections.
 *
 * HOW TESTS CITE AN ID — one convention, greppable:
 *   put the id in square brackets in the title of the `it(...)` or `describe(...)` that verifies it:
 *       it('[c2.rule-5] two owners approving at once launch once', ...)
 *   A title built at run time (a loop, `it.each`) carries the token in a comment on the line above:
 *       // covers: [c2.rule-3]
 * Either way the checker looks for `[<id>]` in the test files (`*.test.ts` under test/, daemon/,
 * bridge-client/), so `grep -rn '\[c2.rule-5\]' test daemon bridge-client` lists every test of rule 5.
 */

export interface Requirement {
  /** Where the promise is written in contracts.md. */
  source: string;
  /** The promise in one line. */
  statement: string;
}

export const REQUIREMENTS = {
  // ---- 1.1 The ogf-broker subcommands -----------------------------------------------------------------
  'c1.1.loopback-only': {
    source: 'contracts.md 1.1 (v2)',
    statement:
      '--host / OGF_BROKER_HOST accept only 127.0.0.1, ::1 and localhost; anything else exits 2 with one line pointing to a tunnel or reverse proxy and public_url.',
  },
  'c1.1.token-distinct': {
    source: 'contracts.md 1.1 (v2)',
    statement:
      'start refuses (exit 2, one line) any owner’s token equal to any MCP token, compared by hash; generated owner and MCP tokens never repeat an existing owner or MCP token.',
  },
  'c1.1.owner-umask': {
    source: 'contracts.md 1.1 (v4); issue 36 item 2',
    statement:
      'What the daemon starts (catalog commands, stdio upstreams, the bridge client) runs with the umask the daemon was started with: a file an approved command writes gets the owner’s usual mode; only the daemon’s own files are 0600.',
  },
  'c1.1.banner-token': {
    source: 'contracts.md 1.1; issue 19 finding 5',
    statement:
      'The start banner prints the exact token command — with --data-dir D whenever the data dir is not the default, shell-quoted, and node plus the script when ogf-broker is not on PATH — and that line, run as printed in a shell, prints a token the daemon accepts on /mcp.',
  },
  'c1.1.token-where': {
    source: 'contracts.md 1.1; issue 19 finding 5',
    statement:
      'token owner/mcp say on stderr which data dir they used (and that it was just created) and whether a daemon runs there; the URL or token stays the last line of stdout, alone.',
  },
  'c1.1.status-exposed': {
    source: 'contracts.md 1.1 (v2); issue 19 finding 5',
    statement:
      'status says how many tools a connected upstream listed and, when fewer are exposed (the tools filter, skipped tools), how many: "connected with 8 tools, 4 exposed".',
  },
  'c1.1.doctor-datadir': {
    source: 'contracts.md 1.1; docs/security.md; issue 19 finding 5',
    statement:
      'doctor warns, naming the argv element or cwd, when an upstream is handed the data dir or a folder containing it (absolute, ~, ./ or ../ paths, --flag=PATH values, cwd); a sibling folder gets no warning.',
  },

  // ---- 1.2 The data dir -------------------------------------------------------------------------------
  'c1.2.tokens': {
    source: 'contracts.md 1.1, 1.2',
    statement:
      'Owner and MCP tokens are never logged, never in the database, results or owner frames; only owner.token and mcp.token hold them in clear, other owners and clients only as hashes.',
  },
  'c1.2.modes': {
    source: 'contracts.md 1.1, 1.2',
    statement:
      'The data dir and run/ are 0700, every file the daemon creates is 0600 (SQLite -wal/-shm included); a group/other accessible data dir is refused at start.',
  },

  // ---- 1.3 The config file ----------------------------------------------------------------------------
  'c1.3.text-controls': {
    source: 'contracts.md 1.3 (v2), 3.2',
    statement:
      'A catalog string value holds no control (C0, DEL, C1) or bidi control character, except newline and tab where allow_newlines is true; a justification none but newline and tab; the refusal names the field and never echoes the value.',
  },
  'c1.3.linear-patterns': {
    source: 'contracts.md 1.3 (v2)',
    statement:
      'A param pattern is anchored as ^(?:…)$ and matched in linear time (RE2), so no value can stall the daemon; a pattern RE2 cannot compile is a config error naming the field.',
  },
  'c1.3.pending-caps': {
    source: 'contracts.md 1.3, 3.2 (v2)',
    statement:
      'A client with max_pending_per_client PENDING commands, or any client once all have max_pending, gets TooManyPending naming the cap: nothing is queued and the owner sees nothing, however the calls arrive (JSON-RPC batches, parallel POSTs); a request_id repeat is not a new command.',
  },
  'c1.3.mcp-origins': {
    source: 'contracts.md 1.3',
    statement:
      "/mcp accepts a browser Origin listed in mcp_allowed_origins besides the daemon's own and public_url's; any other Origin is 403, a request without Origin is judged by its token.",
  },

  // ---- 2. The command lifecycle -----------------------------------------------------------------------
  'c2.rule-1': {
    source: 'contracts.md 2 rule 1',
    statement:
      'Nothing is launched and no session file is written unless the owner approved; denied, expired or cancelled commands never launch.',
  },
  'c2.rule-2': {
    source: 'contracts.md 2 rule 2',
    statement:
      'failed means the effect certainly did not happen, unknown that it may have; neither is retried or replayed; a reconciliation is recorded without changing state or status.',
  },
  'c2.rule-3': {
    source: 'contracts.md 2 rule 3',
    statement:
      'running is durable before the spawn; a daemon that dies mid-run marks the command unknown/DaemonRestarted at its next start and never launches it again.',
  },
  'c2.rule-4': {
    source: 'contracts.md 2 rule 4',
    statement:
      'awaiting_review commands survive a restart with their deadline, cues become denied/SessionSecretNotRetained; approved-not-spawned commands launch after it, approved cues fail with SessionSecretNotRetained.',
  },
  'c2.rule-5': {
    source: 'contracts.md 2 rule 5',
    statement: 'Approval happens once: two owners approving at once give one launch and one AlreadyDecided.',
  },
  'c2.rule-6': {
    source: 'contracts.md 2 rule 6',
    statement: 'Cues for the same OGF session never overlap: they launch one at a time, in approval order.',
  },
  'c2.rule-7': {
    source: 'contracts.md 2 rule 7',
    statement: 'There is no timed-out status: a wait that ends before a final state returns PENDING.',
  },
  'c2.rule-8': {
    source: 'contracts.md 2 rule 8',
    statement:
      'Every command has a version starting at 1 and increased by every change; times are ISO-8601 UTC with milliseconds.',
  },
  'c2.crash-safety': {
    source: 'issue 6 item 2',
    statement:
      'A daemon killed at any point of a command’s life loses no command, launches none twice, leaves no session file behind and ends in a state the contract allows.',
  },
  'c2.review-deadline': {
    source: 'contracts.md 2 (expire, ReviewExpired); bench row 5',
    statement:
      'A command awaiting review is expired at its review_expires_at and not before, in deadline order, whatever other deadlines were set, moved or dropped meanwhile; one that left awaiting_review is never expired; an expiry the store refused is tried again a second later; memory follows the commands awaiting, not those decided.',
  },
  'c2.one-commit': {
    source: 'issue 19 finding 6; architecture.md example 3; contracts.md 2 rule 3',
    statement:
      'An approval whose session lane is free commits approved and running in one transaction (one fsync), announced in version order, before anything is spawned or sent; with a busy lane they commit apart; a batch the store refuses launches nothing and leaves the command awaiting review.',
  },

  // ---- 3. The MCP surface -----------------------------------------------------------------------------
  'c3.auth': {
    source: 'contracts.md 3, 5',
    statement:
      'MCP without a valid token gets 401; the owner WebSocket without cookie and panel key or owner bearer gets 401; a pending_id is visible only to the client that created it.',
  },

  // ---- 3.1 The tools ----------------------------------------------------------------------------------
  'c3.1.unknown-tool': {
    source: 'contracts.md 3.1',
    statement: 'A tools/call naming no listed tool is JSON-RPC error -32602 whose message names the tool.',
  },
  'c3.1.list-changed': {
    source: 'contracts.md 3.1',
    statement:
      'When the tool set changes, clients are sent notifications/tools/list_changed (2025 sessions and 2026-07-28 subscriptions).',
  },

  // ---- 3.2 The result ---------------------------------------------------------------------------------
  'c3.2.retention': {
    source: 'contracts.md 3.2, 10; issue 19 finding 3',
    statement:
      'A command final for longer than 7 days (the longest a task may live) has its bulky fields (stdout, stderr, an upstream result, any argument over 4 KiB of JSON) replaced by their size and SHA-256, in bounded batches off the hot path; its result says so in detail (output_truncated for output), the owner View shows the same, a repeat request_id with the same arguments still finds it, and the audit log is untouched but for an appended prune entry.',
  },
  'c3.2.sessions-per-client': {
    source: 'contracts.md 3.2 (v2)',
    statement:
      "One client has at most 64 open MCP sessions: its 65th evicts its own least recently used idle one, never another client's (503 when all its own are busy); one client's requests in flight are bounded too (128, its 2025 sessions' and its 2026-07-28 requests together).",
  },
  'c3.2.bad-input': {
    source: 'contracts.md 1.1, 3.2, 5, 6; issue 6 item 4',
    statement:
      'Bad input on every edge (MCP arguments, owner frames, bridge frames, session files, config, flags) gets a clear error naming the field, changes nothing, and never crashes the daemon.',
  },

  // ---- 3.3 ogf_cue ------------------------------------------------------------------------------------
  'c3.3.session-secret': {
    source: 'contracts.md 3.3, 1.2; preamble "Secrets"',
    statement:
      'A cue session UUID never reaches argv, an environment, a log line, the database (WAL included), the owner panel or frames, nor any result.',
  },

  // ---- 4. Launch and the one-time protected session file ----------------------------------------------
  'c4.no-shell': {
    source: 'contracts.md 1.3, 4',
    statement:
      'No shell is ever involved: argv comes from the template, a placeholder is one whole element, hostile argument text stays one literal argument.',
  },
  'c4.child-env': {
    source: 'contracts.md 1.3, 4',
    statement:
      'Children get an environment reduced to PATH/HOME/LANG (plus a catalog command’s own env); the bridge client gets no secret in argv or environment.',
  },
  'c4.session-file': {
    source: 'contracts.md 4',
    statement:
      'The session file is created O_EXCL|O_NOFOLLOW 0600 only on approval, read once by the bridge client (refused unless a regular 0600 file of its uid, unlinked before connecting), and removed by the daemon if left.',
  },
  'c4.spawn-error': {
    source: 'contracts.md 4 ("spawn error → failed/LaunchFailed"), 2 rule 2',
    statement:
      'A launch whose spawn fails (the launcher out of descriptors, program missing) ends failed/LaunchFailed, never stays running, and never stops the daemon; an AI holding every descriptor of the daemon cannot stop an approved launch; a launcher killed mid-run leaves that command UNKNOWN, never running.',
  },

  // ---- 5. The owner panel and the owner WebSocket -----------------------------------------------------
  'c5.host': {
    source: 'contracts.md 5',
    statement:
      'Every HTTP route and upgrade checks Host against loopback names and public_url (DNS rebinding) and answers 403 otherwise.',
  },
  'c5.origin': {
    source: 'contracts.md 5',
    statement:
      "A browser Origin other than the daemon's own (or public_url) is refused (403), after Host and auth.",
  },
  'c5.login': {
    source: 'contracts.md 5',
    statement:
      'The owner token never travels in a query string; login yields an HttpOnly SameSite=Strict cookie; the login page holds no command data.',
  },
  'c5.owner-key': {
    source: 'contracts.md 5 (v2)',
    statement:
      'Login also returns a panel key kept in localStorage; the owner WebSocket needs the session cookie together with that session’s key (subprotocol ogf-owner.<key>), a cookie alone gets 401; the key is never logged or in a URL.',
  },
  'c5.login-throttle': {
    source: 'contracts.md 5 (v2)',
    statement:
      'Login attempts are checked at most 4 at a time (global, not per address), a wrong token is answered after 1 s, and a correct token is never locked out by failures.',
  },
  'c5.logout-closes': {
    source: 'contracts.md 5 (v2)',
    statement:
      'Logging out and a session’s expiry close that session’s owner sockets at once; its cookie and key open nothing after.',
  },
  'c5.terminal-escaped': {
    source: 'contracts.md 5 (v2)',
    statement:
      'ogf-broker list prints every AI-supplied text with control and bidi characters escaped (\\u001b, \\n), rows stored before the input rule included, so no request can redraw the terminal or fake a line.',
  },
  'c5.owner-frames-bounded': {
    source: 'contracts.md 1.3, 4, 5 (v2); issue 19 (owner frames)',
    statement:
      'output_limit_bytes is at most 1 MiB and the MCP result keeps that much; owner frames carry at most 16 KiB of UTF-8 of each of stdout and stderr, cut on a code point boundary and flagged output_truncated; and a View carries its args whole only up to 16 KiB of JSON, else a bounded preview (small arguments whole and exact, each large one by name, size and start, the rest counted) flagged args_truncated with args_bytes, so a snapshot of 110 calls of 1 MiB stays far below 16 MiB; the owner gets the exact whole arguments with the args frame (NotFound for an unknown id), the panel says they were shortened and loads them on demand, and approving sends them whole whether loaded or not.',
  },
  'c5.daemon-survives': {
    source: 'contracts.md 5 (v2)',
    statement:
      'No flood, content or frame size from an AI stops the daemon or locks the owner out: owners connect, get their snapshot and `ogf-broker list` works with full PENDING caps, restart or not; an error serving one owner closes only that socket (1011).',
  },
  'c5.http-deadlines': {
    source: 'contracts.md 5',
    statement:
      'Every HTTP connection must send its headers within 10 s and its body within 30 s, else it gets 408 and is closed; a response (a 90 s tool call) is not cut by these.',
  },
  'c5.http-keepalive': {
    source: 'contracts.md 3, 5; docs/clients.md (tunnels and proxies)',
    statement:
      'An idle keep-alive connection is closed by the client or its proxy before the daemon closes it (the daemon keeps one 130 s, past the 60–120 s pools of nginx, Cloudflare Tunnel and Caddy): a client busy between two calls is answered, not cut with `other side closed`.',
  },
  'c5.http-connections': {
    source: 'contracts.md 4, 5; the AI is the adversary',
    statement:
      'Connections are capped below the descriptor limit; at the cap the oldest idle or still-sending connection gives way; /mcp may hold only part of the cap, so the owner and new clients always get in.',
  },
  'c5.click-safety': {
    source: 'contracts.md 5 (v2)',
    statement:
      "A card's decision buttons (and their shortcuts) are inert, shown disabled, for its first second on screen and a second after it moves; arrivals never move the focused or hovered card; a decision never sends focus to the newest card.",
  },
  'c5.upstream-args-visible': {
    source: 'contracts.md 5 (v2), 7, 12 (v3); issue 19',
    statement:
      'Every key and string of an upstream call’s arguments (any depth), and every AI or upstream text in the panel and its notifications, shows control and bidi characters as visible escapes (\\u202e); a string holding newlines reads as its lines with its length in characters; ogf-broker list shows the same escapes.',
  },
  'c5.load': {
    source: 'contracts.md 5; issue 6 item 6',
    statement:
      'Under many concurrent clients and owners every waiter gets its final result, every owner sees every change in commit order, and memory returns near its baseline.',
  },
  'c5.logout-origin': {
    source: 'contracts.md 5 (v2)',
    statement:
      'POST /logout from another origin (a page on another 127.0.0.1 port) or with the session cookie but not its panel key ends no session.',
  },
  'c5.cookie-shadow': {
    source: 'contracts.md 5 (v2)',
    statement:
      'An extra ogf_owner_session cookie planted by another local server (a longer Path, sent first) does not shadow the owner’s real session.',
  },
  'c5.first-run-panel': {
    source: 'contracts.md 5 (hello.setup, an addition); issue 19 finding 5',
    statement:
      'While nothing waits, the panel shows the MCP URL, the exact token command (never a token), the catalog commands, each upstream with its state and exposed tool count (kept live by setup frames), the avatar bridge on/off and where the docs are.',
  },

  // ---- 7. Gated upstream MCP servers ------------------------------------------------------------------
  'c7.cost': {
    source: 'contracts.md 7, issue 19 finding 4',
    statement:
      "An upstream's tool definitions and the AI's arguments cost the daemon a bounded time: a definition over 64 KiB (at every listing), a schema over its size, ref, depth or pattern bounds is not exposed (upstream_tool_skipped); refs are not inlined, formats not asserted, uniqueItems linear, each call's check has a step budget (InvalidArguments naming the value); schemas compile in background slices, so the owners, clients and other upstreams are served meanwhile.",
  },
  'c7.args-bounded': {
    source: 'contracts.md 7, 3.2, 5 (v2); issue 19',
    statement:
      'An upstream call whose arguments nest deeper than 32 arrays/objects or exceed 1 MiB of JSON is refused InvalidArguments naming the field and the limit, nothing queued; the panel renders any argument in bounded work (folded by size and depth, opened one level or one chunk at a time), so no argument can crash, stall or blind the owner’s tab, on arrival or on reload.',
  },
  'c7.connections': {
    source: 'contracts.md 7, 1.1 (v2)',
    statement:
      'Every upstream is connected in the background at start (start never waits); status and doctor show each one connected with N tools, or down and why.',
  },
  'c7.restart': {
    source: 'contracts.md 7',
    statement:
      'A stdio upstream that exits is started again (1 s, doubling to 60 s while it keeps failing) and is connected again afterwards.',
  },
  'c7.stop': {
    source: 'contracts.md 7',
    statement:
      'A stdio upstream runs in its own process group with argv only (no shell) and the reduced environment plus env; stopping the daemon stops the whole group (no orphans).',
  },
  'c7.stderr': {
    source: 'contracts.md 7',
    statement:
      "A stdio upstream's stderr goes to the daemon's log line by line, tagged with the upstream's name.",
  },
  'c7.headers-env': {
    source: 'contracts.md 7',
    statement:
      'A Streamable HTTP upstream gets the headers named in headers_from_env from the daemon environment; their values are never logged, stored or shown.',
  },
  'c7.refuse-garbage': {
    source: 'contracts.md 7, architecture.md rule 5',
    statement:
      'An upstream that floods its tool list or answers garbage is refused and logged; the daemon and the other upstreams go on unharmed.',
  },
  'c7.exposed': {
    source: 'contracts.md 7, 10',
    statement:
      'Each upstream tool is listed as <upstream>__<tool> with its inputSchema, title and annotations, the approval sentence before its description, no outputSchema, taskSupport optional; tools filters them.',
  },
  'c7.validation': {
    source: 'contracts.md 7, 3.2',
    statement:
      "A call is validated against the upstream's inputSchema in the product: a mismatch is InvalidArguments naming the field, and nothing is queued.",
  },
  'c7.exact-args': {
    source: 'contracts.md 7, 2 rule 1',
    statement:
      'On approval the daemon sends tools/call with exactly the approved arguments, after running is durable.',
  },
  'c7.once': {
    source: 'contracts.md 7, 2 rules 2-3',
    statement:
      'An approved upstream call reaches the upstream exactly once; nothing is retried, replayed or sent twice.',
  },
  'c7.outcomes': {
    source: 'contracts.md 7 (outcome table)',
    statement:
      'Every row of the outcome table maps as written: UpstreamUnavailable, UpstreamRejected, UpstreamToolError, succeeded, UpstreamError, DeliveryUnconfirmed, KilledAtDeadline (with notifications/cancelled).',
  },
  'c7.answer': {
    source: 'contracts.md 7',
    statement:
      "A SUCCEEDED call answers with the upstream's result unchanged plus _meta ogf-broker/command; await_command_result answers 3.2 with upstream_result and the upstream's content blocks after the summary.",
  },
  'c7.read-only-policy': {
    source: 'contracts.md 7',
    statement:
      'With trust_read_only_hint, calls to tools annotated readOnlyHint: true are approved at once by policy:read_only, and are still commands, recorded and shown.',
  },
  'c7.read-only-description': {
    source: 'contracts.md 7; issue 19 finding 5',
    statement:
      "A tool the read-only policy approves (trust_read_only_hint, readOnlyHint: true, one approval) says in tools/list that its calls are approved at once by the owner's policy and recorded, not that they wait for the owner; every other upstream tool still says each call needs the owner's approval.",
  },
  'c7.twin': {
    source: 'contracts.md 7, 3.1',
    statement:
      'An identical upstream call (same client, tool and arguments) while an earlier one is PENDING returns the earlier one.',
  },
  'c7.card': {
    source: 'contracts.md 7, 5 (v2)',
    statement:
      "The owner's card for an upstream call shows the upstream and tool, the server's annotations as its claims and every argument (long values folded, none hidden); ogf-broker list shows the same, escaped.",
  },

  // ---- 8. Grants --------------------------------------------------------------------------------------
  'c8.match': {
    source: 'contracts.md 8',
    statement:
      'At submit, after validation and the request_id/twin rules, the oldest live grant matching command, client (or *) and args (JSON equality, or any) approves the new command: owners see only version 2, approved, decided_by grant:<id>; a request no grant matches waits for the owners.',
  },
  'c8.atomic': {
    source: 'contracts.md 8',
    statement:
      'The grant-approved command is created, approved and takes its use in one transaction: however many requests arrive at once, a grant with N uses approves at most N, and after a kill -9 the uses taken equal the commands it approved.',
  },
  'c8.end': {
    source: 'contracts.md 8',
    statement:
      'Revoking is immediate and never touches commands the grant already approved; a grant expires at expires_at and is spent at 0 uses; config grants keep a stable id and are NotRevocable; grants and their counts survive restarts.',
  },
  'c8.grantable': {
    source: 'contracts.md 8, 5',
    statement:
      'ogf.cue, commands needing more than one approval and unknown names are NotGrantable; an approve with grant that is refused approves nothing.',
  },
  'c8.owner-only': {
    source: 'contracts.md 8, 2 rule 1',
    statement: 'No MCP surface can create, see or end a grant; only owners make grants.',
  },
  'c8.panel': {
    source: 'contracts.md 5 (v2)',
    statement:
      'The panel offers Allow… on grantable cards (scope, TTL, uses; approve and grant in one step), lists every live grant with Revoke…, and says which grant approved a card.',
  },

  // ---- 9. Named owners and quorum ---------------------------------------------------------------------
  'c9.named': {
    source: 'contracts.md 9, 1.1 (v2)',
    statement:
      'token owner --name NAME creates an owner (only its hash kept) and prints its login URL once as the last line; again for an existing one exits 2 pointing to --rotate; each owner logs in (panel and Bearer) with its own token and hello names it; token owner prints owner owner’s URL at any time.',
  },
  'c9.decided-by': {
    source: 'contracts.md 9, 5 (v2)',
    statement:
      'A decision or reconciliation records the deciding owner’s name (View decided_by, the audit actor, ogf-broker list); the terminal commands act as owner owner; the panel names the signed-in owner.',
  },
  'c9.rotate': {
    source: 'contracts.md 1.1, 5 (v2), 9',
    statement:
      'token owner --rotate replaces an owner’s token and a running daemon closes every panel session and socket of that owner (Bearer included) at once; the old token logs in nowhere, the new one does, other owners are untouched; owner owner’s rotation rewrites owner.token and is refused (exit 2) when OGF_BROKER_OWNER_TOKEN fixes it.',
  },

  // ---- 10. Protocol generations and Tasks -------------------------------------------------------------
  'c10.tasks-list-bounded': {
    source: 'contracts.md 10; issue 19 finding 3',
    statement:
      "tasks/list reads only the calling client's tasks through an index, a bounded page at a time (at most 50 tasks and about 2 MiB of stored records, with a nextCursor), so no client's history — however large — can stall the daemon, the owner's login or socket; a client with no tasks gets an empty list.",
  },
  'c10.generations': {
    source: 'contracts.md 10',
    statement:
      '/mcp and mcp-stdio serve the 2025 generation (initialize, Mcp-Session-Id) and 2026-07-28 (server/discover, per-request envelope, no session) on one URL and token, with the same tools, answers and rules.',
  },
  'c10.tasks': {
    source: 'contracts.md 10',
    statement:
      'A task-augmented gated call (2025-11-25 params.task; 2026-07-28 the Tasks extension) answers its handle at once (taskId = pending_id): working while PENDING, cancelled on CancelledByCaller, completed with exactly the plain answer otherwise.',
  },
  'c10.tasks-durable': {
    source: 'contracts.md 10, 2 rule 4',
    statement:
      'A task is its command: durable before the handle leaves, it survives a kill -9 and restart (a cue becomes DENIED/SessionSecretNotRetained), and another client gets the unknown-id error for it.',
  },

  // ---- 11. Rules, and grants wider than one argument set ----------------------------------------------
  'c11.decide': {
    source: 'contracts.md 11; 2 rule 1 (v3)',
    statement:
      'At submit, after validation, the request_id/twin rules and the caps, the first true rule decides: deny creates the command denied (PolicyDenied, owner_note = note, decided_by rule:<id>) in one transaction; allow approves it in the submit transaction (rule:<id>, first seen at version 2) except cues and quorum commands (then ask); ask raises approvals_needed to the larger count.',
  },
  'c11.fail-closed': {
    source: 'contracts.md 11',
    statement:
      'An expression that fails for a request is not true; after a deny rule failed, no later allow rule, grant or read-only policy approves the request (it waits for the owners); a failing rule is logged once per rule per minute.',
  },
  'c11.bad-rule': {
    source: 'contracts.md 11, 1.1',
    statement:
      'A rule whose expression does not compile, names an unknown variable or function, is not boolean or is over 4096 characters, a bad or repeated id, a bad decision, a long note, or approvals without ask is a config error: exit 2 naming the rule id and what is wrong.',
  },
  'c11.regex': {
    source: 'contracts.md 11 (matches with RE2 semantics, in linear time); docs/security.md',
    statement:
      'matches in a rule or grant runs on RE2 in linear time, whoever chose the pattern or the value: a catastrophic pattern on a long value cannot stall the daemon.',
  },
  'c11.path-under': {
    source: 'contracts.md 11',
    statement:
      'path_under(p, dir) is true only when p is an absolute path that, with . segments and repeated / removed and .. resolved lexically, is dir or inside it (whole NFC segments); an error for relative, empty, NUL, a non-string or a .. above /; for a stdio upstream on this machine, links in the existing part resolved first.',
  },
  'c11.path-rule-spelling': {
    source: 'contracts.md 11 (v4); issue 35 finding 1',
    statement:
      'A deny rule on a folder holds against every spelling the AI can send (relative, ./, .. above /, //, NUL, a non-string, duplicate keys, an NFD spelling, a link into it): with trust_read_only_hint on, none is read by policy:read_only; each is denied or waits for the owners.',
  },
  'c11.path-rule-links': {
    source: 'contracts.md 11 (v4); issue 35 finding 1',
    statement:
      'An allow rule or a when grant on a folder does not approve a call whose path leaves it through a symbolic link (any Unicode spelling of its name) or is relative: it waits for the owners.',
  },
  'c11.when': {
    source: 'contracts.md 11, 8',
    statement:
      'A grant may carry when (a CEL expression) instead of args, through the grant and approve…grant frames and grant add --when; it matches in the submit transaction, so concurrent requests never take more uses than it has; a bad expression is a BadMessage; it survives a restart.',
  },
  'c11.policy-test': {
    source: 'contracts.md 11, 1.1',
    statement:
      'policy_test counts, of the newest N (1..5000, default 500) commands, those a rule or grant would have matched, by final state, with up to 20 sample ids; ogf-broker policy test prints one line per rule (matched M of N, K otherwise) then each command whose decision would change, exit 2 for a bad config; status prints how many rules are active.',
  },
  'c11.policy-test-same-command': {
    source: 'contracts.md 11 (v4); issue 35 finding 8c',
    statement:
      "policy_test with a grant (the Allow… dialog) counts the newest limit commands of the grant's command name, read through an index in both stores: a flood of other requests cannot push earlier denials out of it.",
  },
  'c11.panel-allow': {
    source: 'contracts.md 11, 5 (v2)',
    statement:
      'The panel Allow… offers paths under each folder of every absolute-path string argument up to /, shows the grant expression and the policy_test answer before confirming, and the grant it makes lets later requests under that folder through while others wait.',
  },

  // ---- 12. Previews: the owner sees the effect before deciding ----------------------------------------
  'c12.diff': {
    source: 'contracts.md 12',
    statement:
      'A previewable call awaiting review gets a unified diff (3 lines of context, --- / +++ <path>) before the decision; the file is untouched until approval; the preview arrives as an upsert of the same version, is recorded in the audit log, and no MCP answer or log line carries it.',
  },
  'c12.new-file': {
    source: 'contracts.md 12',
    statement: 'A file that does not exist yet diffs from --- /dev/null and is marked new_file.',
  },
  'c12.dry-run': {
    source: 'contracts.md 12',
    statement:
      'A dry_run preview calls the same tool with the flag set and shows its text; nothing is changed.',
  },
  'c12.refused': {
    source: 'contracts.md 12',
    statement: 'A preview read the upstream refuses (outside its roots) fails the preview and says so.',
  },
  'c12.readonly': {
    source: 'contracts.md 12',
    statement:
      'A read tool the upstream does not annotate readOnlyHint: true is never called: PreviewUnavailable: <tool> is not read-only.',
  },
  'c12.enoent': {
    source: 'contracts.md 12',
    statement:
      'A read error saying the file does not exist (ENOENT, no such file, does not exist) is a new file.',
  },
  'c12.read-fails': {
    source: 'contracts.md 12',
    statement: 'A read that floods (over 1 MiB) or answers garbage fails the preview in one sentence.',
  },
  'c12.append': {
    source: 'contracts.md 12',
    statement: 'mode append diffs the current content against the current content plus the appended text.',
  },
  'c12.decided': {
    source: 'contracts.md 12',
    statement:
      'Preview calls are made only while the command awaits review: a decision cancels one in flight and nothing is recorded after it.',
  },
  'c12.timeout': {
    source: 'contracts.md 12',
    statement:
      'A preview call is cut at 10 s (notifications/cancelled) and the preview fails, never blocking a decision.',
  },
  'c12.granted-no-preview': {
    source: 'contracts.md 12',
    statement: 'A command approved by a grant never awaits review, so it gets no preview call.',
  },
  'c12.slots': {
    source: 'contracts.md 12',
    statement: 'At most 4 preview calls run at once per upstream.',
  },
  'c12.upstream-down': {
    source: 'contracts.md 12',
    statement: 'An upstream that is down gives a failed preview, and the owner can still decide.',
  },
  'c12.card': {
    source: 'contracts.md 12',
    statement:
      'The card shows the diff as lines marked by sign and word as well as colour, with line numbers, new file, the failure in words, and the may-still-change note; a multi-line argument reads as its lines.',
  },
  'c12.fold': {
    source: 'contracts.md 12',
    statement: 'A long diff is folded behind a button that counts the remaining lines and opens by keyboard.',
  },
  'c12.isolated': {
    source: 'contracts.md 12 (v4)',
    statement:
      'A preview never shares a connection with approved calls: a preview answer over the message bound ends only the preview connection; the approved call in flight succeeds and the next call works.',
  },
  'c12.file-info': {
    source: 'contracts.md 12 (v4)',
    statement:
      'With preset filesystem, get_file_info comes first and only a regular file of at most 1 MiB is read: a 9 MiB file or a FIFO fails the preview in words and is never read.',
  },
  'c12.rule-denied': {
    source: 'contracts.md 12 (v4)',
    statement:
      'A command a rule denies at submit is never previewed: no read reaches the upstream, no preview instance starts.',
  },
  'c12.text-removed': {
    source: 'contracts.md 12 (v4)',
    statement:
      'When a command ends (succeeded, denied, expired, cancelled) its preview text leaves the store; the audit keeps its SHA-256.',
  },
  'c12.idle': {
    source: 'contracts.md 12 (v4)',
    statement:
      'A stdio upstream’s preview instance is started on demand with its argv, stopped after 60 s idle and when the daemon stops; its stderr is logged tagged as the preview instance.',
  },
  'c12.http-session': {
    source: 'contracts.md 12 (v4)',
    statement: 'An HTTP upstream’s previews use a session of their own, never the one approved calls use.',
  },

  // ---- 13.1 Notifications -----------------------------------------------------------------------------
  'c13.1.never-blocks': {
    source: 'contracts.md 13.1',
    statement:
      'A notification channel that hangs, answers slowly or 5xx forever changes nothing about any command: the owner sees it and decides, and it runs, while the channel still holds the request.',
  },
  'c13.1.secrets': {
    source: 'contracts.md 13.1, 13.2',
    statement:
      'No message holds a token, cookie, panel key, session UUID, url_from_env URL, header value or (without include_args) an argument; logs name the channel and status, never the URL or a header value.',
  },
  'c13.1.markup': {
    source: 'contracts.md 13.1 (v4)',
    statement:
      'Text from the AI (arguments under include_args, client names) is escaped for Slack and Discord: no markdown link, emphasis, mention or link it writes renders there.',
  },
  'c13.1.formats': {
    source: 'contracts.md 13.1',
    statement:
      'json posts the seven fields, ntfy the summary with Title/Click/Priority/Tags, slack {text}, discord {content}, email the title as subject over SMTP; status prints each channel’s last success and failure.',
  },
  'c13.1.once': {
    source: 'contracts.md 13.1 (v4); issue 36 item 1',
    statement:
      'Exactly one waiting message per command and channel each time it starts awaiting review: when its preview is ready or failed, or 2 s after it started waiting (at once without a preview); a digest counts each command once and lists its pending_ids.',
  },
  'c13.1.queue': {
    source: 'contracts.md 13.1',
    statement:
      'At most 16 messages in flight, past 1,000 waiting the oldest dropped (logged); retries after 1 s and 5 s on a network error or 5xx only, then notify_failed.',
  },
  'c13.1.digest': {
    source: 'contracts.md 13.1',
    statement:
      'More than 5 commands waiting within 10 s: the 6th and later go as one digest at the window’s end ("7 more requests from local"); 500 requests are a few messages that cover them all.',
  },
  'c13.1.deep-link': {
    source: 'contracts.md 13.1, 13.2',
    statement:
      '<base>/#<pending_id> opens the panel scrolled to that card and focused — after the login page or the printed login URL in the same tab, for a finished card, and for an arrival held behind "N new requests".',
  },

  // ---- 13.2 The panel on a phone ----------------------------------------------------------------------
  'c13.2.installable-app': {
    source: 'contracts.md 13.2',
    statement:
      'The panel is installable (manifest with 192 and 512 px icons, no installability errors in Chromium), its service worker caches the panel’s own files only (never a View, /, or /owner/), both are served through public_url, and at 390 px nothing scrolls sideways and buttons are thumb-sized.',
  },
  'c13.2.web-push': {
    source: 'contracts.md 13.2',
    statement:
      'VAPID keys are made at first start in vapid.json (0600) and kept; push_subscribe/push_unsubscribe take https (or loopback http) endpoints per owner, kept across restarts; each waiting command is pushed with RFC 8291 encryption and a VAPID JWT that verifies; 404/410 removes the subscription.',
  },

  // ---- 13.3 Passkeys and passkey-signed approvals -----------------------------------------------------
  'c13.3.approve': {
    source: 'contracts.md 13.3 (v3); docs/security.md',
    statement:
      'A require_passkey command is approved only with a valid passkey assertion (user verified) of the approving owner, per owner of a quorum: what holds owner.token and a panel key gets PasskeyRequired over a Bearer socket, a token session, the terminal, and with a forged signature; a grant for it is NotGrantable; nothing is approved.',
  },
  'c13.3.challenge': {
    source: 'contracts.md 13.3 (v3)',
    statement:
      'An approval challenge covers exactly what is approved (base64url SHA-256 of the RFC 8785 JSON of id, version, command, client, args, action, then a 16-byte nonce), for the owner it was issued to, valid 120 s and once: an assertion for another command or version, replayed, or late is PasskeyRequired.',
  },
  'c13.3.enrol': {
    source: 'contracts.md 13.3 (v3); docs/security.md',
    statement:
      "Once an owner has a passkey, only a session signed in with one may add or remove passkeys: a token session (what holds owner.token) cannot enrol its own authenticator; token owner --rotate removes the owner's passkeys (recovery) and approves nothing.",
  },
  'c13.3.kept': {
    source: 'contracts.md 13.3, 14 (v3)',
    statement:
      "The verified assertion is kept in the approval's audit entry with everything an offline check needs (credential id, COSE public key, rp id, origins, the canonical JSON and nonce, the response); verifyKeptAssertion finds one altered byte, other args or another version.",
  },
  'c13.3.recorded': {
    source: 'contracts.md 13.3 (v4), 14; docs/security.md',
    statement:
      'A passkey signs an approval (or a sign-in) only when the audit chain added it for that owner with its public key and did not remove it since: a key written straight into the passkeys table (or a row whose key was swapped) is refused by the daemon, and `audit verify` (walk and full check, with and without --pub) says `bad passkey assertion` for an approval whose key the chain did not add; passkeys present at the upgrade are taken into the chain by the daemon once.',
  },

  // ---- 14. A tamper-evident audit record, and export --------------------------------------------------
  'c14.chain': {
    source: 'contracts.md 14',
    statement:
      'Every audit entry is {seq, at, actor, event, command_id?, data, prev, hash}: seq from 1 without gaps, prev the previous hash (64 zeros first), hash the SHA-256 of its RFC 8785 JSON, appended in the transaction of the change it records; older entries are chained at the first start; no entry holds a token, a cookie, a session UUID or a panel key.',
  },
  'c14.checkpoints': {
    source: 'contracts.md 14',
    statement:
      'The daemon signs {seq, hash, at} with its Ed25519 audit.key (0600, made at the first start) after every 1,000th entry (in its transaction), every 10 minutes when entries are new, and at a clean stop; listeners hear of each after its commit, never of one a failed batch made.',
  },
  'c14.verify': {
    source: 'contracts.md 14',
    statement:
      'audit verify (daemon running or not, broker.db or an export) finds an edit, a deletion, a swapped pair, a tail cut below a checkpoint and a forged or re-signed checkpoint with the first bad seq and its reason; any single byte changed in an exported line is found; export writes self-verifying JSONL and CSV.',
  },
  'c14.history': {
    source: 'contracts.md 14 (v4), issue 35 finding 6',
    statement:
      'audit verify --data-dir (and on PostgreSQL, the database) checks every command row against its chained entries — state, reason, decided_by, command, arguments and argv by SHA-256, the row’s id, a submit entry naming it, and each audit row’s command_id column against its entry — printing mismatch: <command id>: <field> (exit 1); a pruned command is no mismatch; the panel marks such a card "the record disagrees" when its trail is opened.',
  },
  'c14.search': {
    source: 'contracts.md 14',
    statement:
      'The history search (text in command, arguments, client, justification, decider or note; state; client; date range) is answered by SQLite through indexes (trigram FTS5, state and client indexes), never by scanning rows in JavaScript.',
  },
  'c14.frames': {
    source: 'contracts.md 14, 5',
    statement:
      'The owner frame audit answers a command’s chained entries (or the JSONL of several commands’ entries); history takes the search fields; bad fields get BadMessage naming them.',
  },
  'c14.panel': {
    source: 'contracts.md 14',
    statement:
      'In the panel the history can be searched and the shown commands’ entries exported as JSONL that audit verify --file accepts; each card lists who did what, when, on request; it fits a 390 px screen.',
  },
  'c14.crash': {
    source: 'contracts.md 14; architecture.md Fault tests',
    statement:
      'kill -9 in the middle of a burst never breaks the chain: it verifies after each crash and after the restart that recovers the interrupted commands.',
  },
  'c14.config-loaded': {
    source: 'contracts.md 14 (v4), 13.1',
    statement:
      'Each start appends `config_loaded` (the config’s SHA-256, the commands and upstreams that need a passkey or several approvals, the rules’ ids and decisions); when one of those weakened since the last entry a `config` notification says what changed.',
  },

  // ---- 15. OAuth 2.1 for remote AI clients ------------------------------------------------------------
  'c15.discovery': {
    source: 'contracts.md 15',
    statement:
      'With OAuth on, /mcp answers 401 with resource_metadata, the RFC 9728 and RFC 8414 documents carry exactly the contract fields, and Bearer tokens and capability URLs keep working.',
  },
  'c15.ssrf': {
    source: 'contracts.md 15; docs/security.md',
    statement:
      'A Client ID Metadata Document is fetched over https from public addresses only (every resolved address checked, the checked one connected), without redirects, within 5 s and 64 KiB, and must name its own URL.',
  },
  'c15.consent': {
    source: 'contracts.md 15; docs/security.md',
    statement:
      'Only the signed-in owner (cookie and panel key, own Origin) allows a connection, on an unframeable click-safe card naming the client_id host and redirect host; a name held by a token client or a live connection is refused.',
  },
  'c15.tokens': {
    source: 'contracts.md 15; docs/security.md',
    statement:
      'Codes live 60 s and work once (a reuse revokes what the first got), PKCE S256, state, resource and redirect_uri must match, refresh tokens rotate and a reused one revokes the connection, /revoke ends tokens, and only hashes are stored.',
  },
  'c15.isolation': {
    source: 'contracts.md 15, 3',
    statement:
      "An access token acts on /mcp (header only) as its connection's client name, sees only that name's commands, and Disconnect revokes its tokens and closes its MCP sessions at once.",
  },
  'c15.flood': {
    source: 'contracts.md 15 (v4); docs/oauth.md',
    statement:
      'A stranger on the port cannot starve OAuth: registrations the owner never allowed do not count toward the daily cap and go after 10 minutes (at most 100 wait), and at most 100 authorizations wait, the oldest unopened going first, never one the owner has opened.',
  },
  'c15.inherit': {
    source: 'contracts.md 15 (v4); docs/security.md',
    statement:
      'A client name any other connection, token or the history has used is never suggested; taking it shows what it inherits and Allow needs that box ticked (checked by the daemon); Disconnect ends the name’s grants unless unticked.',
  },
  'c15.redirect-scheme': {
    source: 'contracts.md 15 (v4)',
    statement:
      'The consent card shows a redirect URI’s scheme when it is not https (an app on this device), and loopback http as such, never a custom scheme’s host as if it were a site.',
  },

  // ---- 16. Several daemons, one PostgreSQL database ---------------------------------------------------
  'c16.database-url': {
    source: 'contracts.md 16',
    statement:
      'The shared database URL (it may hold a password) comes from the environment; it is never printed, logged or shown by status, doctor or an error, a bad one included.',
  },
  'c16.cli-store': {
    source: 'contracts.md 16 (v4); issue 35 finding 8d',
    statement:
      'A data dir whose daemon opened PostgreSQL says so (store.json, 0600, the variable name, never the URL, kept across restarts); policy test, audit and token given it use that database when the URL is set in their shell, else exit 2 naming the variable — never an empty broker.db.',
  },
  'c16.store-ports': {
    source: 'contracts.md 16; issue 27 item 1',
    statement:
      "The same port suite passes on SQLite and PostgreSQL: of two writers updating one command at one version one is refused, a grant's uses taken by two writers are exactly its uses, a transaction is all or nothing, and another writer's commit reaches the change feed and the synchronous reads.",
  },
  'c16.postgres': {
    source: 'contracts.md 16',
    statement:
      'With OGF_BROKER_DATABASE_URL (or database_url_from_env) the daemon keeps commands, audit, grants, owners and client token hashes in PostgreSQL (no broker.db), and a restart finds its history there.',
  },
  'c16.unavailable': {
    source: 'contracts.md 16, 3.2',
    statement:
      'A daemon that loses the database keeps answering, refuses new MCP commands with the tool error Unavailable and decides nothing; once the database is back it works again without a restart.',
  },
  'c16.status-nodes': {
    source: 'contracts.md 16',
    statement:
      "`status` names this data dir's node and, on PostgreSQL, lists the live nodes (name, host, pid, version, seconds since the heartbeat) and says when the running daemon lost the database; `doctor` names the node and fails when another live daemon holds its name.",
  },
  'c16.nodes-list': {
    source: 'contracts.md 16, 5',
    statement:
      "`ogf-broker list` names each command's node once it shows commands of more than one node; one node's commands print as before.",
  },
  'c16.nodes-panel': {
    source: 'contracts.md 16, 5, 14',
    statement:
      'The panel marks every card (queue, history, search results) with its node once it holds commands of more than one node, at 390 px and desktop width; the history search takes an exact node, and a history frame without it answers as before.',
  },
  'c16.nodes': {
    source: 'contracts.md 16',
    statement:
      "Several daemons (nodes) on one PostgreSQL: each command belongs to the node that received it and only that node launches it; an approval made on any node reaches it; AlreadyDecided, quorum and grant uses hold across nodes; a killed node's commands wait for it and it alone applies rules 3–4; a missed notification only delays; a PostgreSQL restart mid-burst loses nothing and runs nothing twice; a second live daemon with a name in use exits 2.",
  },
  'c16.grant-node': {
    source: 'contracts.md 16 (v4), 8; issue 35 finding 4',
    statement:
      'A grant applies only to commands of the node it names (default: the node of the card or terminal it was made from; `*` on purpose for all): a grant made on one node never approves another node’s command of the same name; config grants are their node’s; grant lists, the panel and `grant add --node` show and set it.',
  },
  'c16.caps-fleet': {
    source: 'contracts.md 16 (v4), 1.3; issue 35 finding 4',
    statement:
      'max_pending_per_client and max_pending count every node’s commands, checked in the submit’s transaction: a burst from one client over two nodes at once queues exactly the cap, the rest TooManyPending.',
  },

  // ---- 17. Running it for months ----------------------------------------------------------------------
  'c17.clean-stop': {
    source: 'contracts.md 17; issue 36 item 3',
    statement:
      'On SIGTERM/SIGINT the daemon stops taking calls, answers every MCP call waiting for a decision with its current result (PENDING with its pending_id) before closing its stream, tells panels it stops (1001), and exits; after a start the same pending_id still awaits review.',
  },
  'c17.init': {
    source: 'contracts.md 17; issue 36 item 5',
    statement:
      '`ogf-broker init` writes a starter config.json (0600, never over one: exit 2): the filesystem server over a folder, reads allowed, writes under drafts/ allowed by a rule, the rest asked.',
  },
  'c17.backup': {
    source: 'contracts.md 17; issue 36 item 5',
    statement:
      '`ogf-broker backup` writes one 0600 archive with a consistent copy of broker.db and the data dir’s files, daemon running or not; `restore` fills only an empty data dir; after it audit verify passes and the same tokens log in.',
  },
  'c17.install': {
    source: 'contracts.md 17; issue 36 item 5',
    statement:
      '`npm pack` holds only what runs and its docs (no tests, benchmarks or test sources); installed globally from it, `ogf-broker` works from any directory.',
  },
  'c17.service': {
    source: 'contracts.md 17; issue 36 item 5',
    statement:
      '`ogf-broker service install` writes a valid systemd user unit running this install’s start (reload by SIGHUP, restart on failure), never over a different one; `service uninstall` removes it.',
  },
  'c17.cli-help': {
    source: 'contracts.md 17; issue 36 item 5',
    statement:
      '`ogf-broker --version` prints the version alone; help, --help and `<command> --help` print usage with every flag on a line (exit 0); every error line starts `ogf-broker: `.',
  },
  'c17.ask-daemon': {
    source: 'contracts.md 17; issue 36 item 6',
    statement:
      '`doctor` and `notify test` ask the running daemon about what it uses (its environment, channels, bridge, upstreams) and say so ("checked in the running daemon, pid N"); without one they check the config here.',
  },
  'c17.docs-surfaces': {
    source: 'contracts.md 17; issue 36 item 7',
    statement:
      'docs/ describes every external surface: each MCP tool, owner frame type, error and reason code, top-level config key and CLI command appears there; no link leaves the repository or names the design folder, and every relative link resolves.',
  },
  'c17.reliability-table': {
    source: 'contracts.md 17; issue 36 item 7',
    statement:
      'The promise tables of docs/reliability.md are generated from this map and the citing tests (npm run docs:reliability); a stale table fails a test that says to run it.',
  },
  'c17.sighup': {
    source: 'contracts.md 17 (v4)',
    statement:
      'SIGHUP never stops the daemon: it reloads the config (logged as `config_reloaded`, or `reload_failed` with the old config kept), and the daemon keeps answering.',
  },
  'c17.reload': {
    source: 'contracts.md 17 (v4)',
    statement:
      'A reload (SIGHUP or `ogf-broker reload`) applies rules, notification channels, config grants, catalog commands and upstream entries to requests from then on without a restart: a changed upstream is restarted, the others keep their connections; each reload appends `config_loaded`; fields read only at start (port, host, data dir, database…) are named as needing a restart and keep their running values.',
  },
  'c17.reload-kept': {
    source: 'contracts.md 17 (v4)',
    statement:
      'A config that does not load changes nothing: the daemon keeps the old one and logs the error; `ogf-broker reload` prints it (`ogf-broker: reload: …`) and exits 2.',
  },

  // ---- contracts.md section 18: rules the owners make in the panel ----------------------------------
  'c18.owner-rules': {
    source: 'contracts.md 18 (v4)',
    statement:
      'Owners’ rules are stored in the database and evaluated after the config’s rules, in the owners’ order; the first true decides with section 11’s meaning (deny: PolicyDenied with the note; allow: approved at submit; ask: waits); a disabled rule decides nothing; a restart keeps them.',
  },
  'c18.allow-never-covers': {
    source: 'contracts.md 18 (v4), 11, 13.3',
    statement:
      'An owner’s allow rule that covers a require_passkey command, a command needing several owners or ogf.cue is kept and counts as ask for it: the request waits for the owners.',
  },
  'c18.frames': {
    source: 'contracts.md 18 (v4)',
    statement:
      'The rules, rule_add, rule_update and rule_remove frames answer with their own type and req_id: rules lists config rules (read-only) then owners’ rules with author, time, enabled and how many requests each decided; a rule that does not compile is a BadMessage naming what is wrong; a config rule’s id in update or remove is NotFound.',
  },
  'c18.audited': {
    source: 'contracts.md 18 (v4), 14',
    statement:
      'Every change of an owner’s rule is an audit entry (rule_added, rule_updated, rule_removed) naming the owner and the rule, in the chain, and a `config` notification event.',
  },
  'c18.cli': {
    source: 'contracts.md 18 (v4)',
    statement:
      'ogf-broker rule list prints one line per rule (id, source, decision, enabled, expression); rule add --when --decision [--note] [--id], rule remove ID and rule disable ID change the owners’ rules through the running daemon; a bad expression exits 2 naming it.',
  },
  'c18.fleet': {
    source: 'contracts.md 18 (v4), 16',
    statement:
      'On a shared PostgreSQL database a rule an owner adds, disables or removes on one node decides (or stops deciding) that node’s and every other node’s requests, and every node counts the same decisions.',
  },
  'c18.panel': {
    source: 'contracts.md 18 (v4), 11',
    statement:
      'The panel’s Allow… offers Always beside the grant’s time: it shows the expression’s test against the past, then saves an owner’s allow rule; the Rules area lists every rule (config ones read-only; owners’ ones with author, time and decided count) with Disable, Edit (tested before saving) and Remove….',
  },

  // ---- contracts.md section 19: deciding from a notification, the AI's own client --------------------
  'c19.elicitation': {
    source: 'contracts.md 19 (v4)',
    statement:
      'A client that declared `elicitation.url` gets one URL-mode `elicitation/create` per command when a gated call stays open waiting for the owner (2025-11-25; on 2026-07-28 the SDK allows none during a call): the card’s link without a token and one sentence; whatever the client answers decides nothing.',
  },

  'c19.actions': {
    source: 'contracts.md 19 (v4)',
    statement:
      'A channel with `"actions": true` (the owners’ Web Push devices with `"push": {"actions": true}`) carries Approve and Deny in each `waiting` message of a command one owner may decide without a passkey, once its preview is ready or failed: ntfy `http` actions that POST, links in Slack, Discord and email, notification actions in Web Push. Each is a one-time URL `<base>/act/<token>`; GET shows the summary, the preview and one button, POST decides as the channel’s owner through the broker (200 and a page), with `"via":"<channel>"` in the decision’s audit entry; `status` says which channels can decide.',
  },
  'c19.actions-attack': {
    source: 'contracts.md 19 (v4)',
    statement:
      'An action is 256 random bits stored only as a hash, bound to its command, version, action, owner and channel, valid 10 minutes: replayed, used after its command changed, or guessed, it answers 410 and decides nothing; it decides its own command only; guesses meet a gate (4 checked at a time, a miss held 1 s, 429 past 32 waiting); no action is ever offered for a command needing a passkey or several owners; the page sets no cookie and writes no input back.',
  },

  // ---- contracts.md section 20: the effect the owner approved, or nothing; and taking it back ---------
  'c20.bound': {
    source: 'contracts.md 20 (v4)',
    statement:
      'A file changed between its ready preview and the approval is never written, whichever door approved it (the panel frame for a call from either MCP generation, the terminal’s approve, an approve that also makes a grant): the command awaits review again at a new version with the new preview, its approvals spent, the owners told again, both hashes audited.',
  },
  'c20.lane': {
    source: 'contracts.md 20 (v4), 2 rule 3',
    statement:
      'Two approved writes of one file launch one at a time: the second re-checks after the first ran, so it comes back to the owners instead of overwriting the first unseen.',
  },
  'c20.granted': {
    source: 'contracts.md 20 (v4), 8',
    statement:
      'A command a grant approves at submit had no preview; the preview made at launch is the one the grant approves, recorded with `running`; a failed preview binds nothing; `bind_previews: false` turns the check off.',
  },
  'c20.crash': {
    source: 'contracts.md 20 (v4), 2 rules 3–4',
    statement:
      'kill -9 between the launch-time check and `running`: after the restart the approved command is checked again before it is sent, is sent at most once, and a file changed meanwhile is not written.',
  },
  'c20.revert': {
    source: 'contracts.md 20 (v4)',
    statement:
      'A succeeded write of a file that existed can be taken back while the file still holds what it wrote (checked by reading it: `revert_check` answers with the diff back, queuing nothing): `revert` (frame or terminal) queues the owner’s own command with `revert_of` that writes the previous content through the same tool; a file changed since, or a new file, is `NotRevertible`; quorum and passkey rules of the original apply.',
  },
  'c20.attack': {
    source: 'contracts.md 20 (v4)',
    statement:
      'The AI cannot revert nor set `revert_of`; an upstream answering the launch-time read differently from the file can only bring the command back to the owners, never make an unapproved write happen.',
  },
  'c20.card': {
    source: 'contracts.md 20 (v4)',
    statement:
      'The card of a command that came back says the file changed since the owners approved and shows the new preview; a revertible card offers `Revert …`, which has the daemon read the file and shows the diff back and the confirm only when it still holds what the command wrote, or says why not (1280 and 390 px).',
  },

  // ---- contracts.md section 21: confinement ----------------------------------------------------------
  'c21.confined': {
    source: 'contracts.md 21 (v4)',
    statement:
      'A confined catalog command or stdio upstream runs under bubblewrap: writes only under `writable` (a write elsewhere fails in the process and leaves nothing), its own /tmp, the data dir hidden (an approved command cannot read the owner token), no network unless `network`, its own PID namespace; a preview instance always confined with nothing writable.',
  },
  'c21.shown': {
    source: 'contracts.md 21 (v4)',
    statement:
      'The reach is said before the owner decides: the card and `ogf-broker list` show "confined: writes only under …; no network" or "not confined"; `status` and `doctor` list each command’s and stdio upstream’s confinement.',
  },
  'c21.never-unconfined': {
    source: 'contracts.md 21 (v4)',
    statement:
      'A confined entry is never run unconfined: without a usable bubblewrap `start` and `reload` refuse the config (exit 2 naming the entry and what is missing) and `doctor` fails; a confined process dies with the daemon, even on kill -9.',
  },
} as const satisfies Record<string, Requirement>;

export type RequirementId = keyof typeof REQUIREMENTS;

/** Every id, in the order above. */
export const REQUIREMENT_IDS = Object.keys(REQUIREMENTS) as RequirementId[];
