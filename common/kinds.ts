/**
 * The kinds of tool as the owner protocol names them (contract 5: View.tool and the fields a kind adds to
 * the View's top level). Written out here, not filled in by declaration merging from daemon/kinds/*, so the
 * panel reads them without importing the daemon and every import check sees the dependency (issue 37 item 1).
 * A new kind adds its tool and its View fields here, and the rest in its own folder (daemon/kinds/<kind>/).
 */

/** The tools a command can be (contract 5 View.tool): a catalog command, an avatar cue, an upstream call. */
export type Tool = 'run_command_wait' | 'ogf_cue' | 'upstream';

/** Upstream calls (contract 5 View.upstream, 7): which server and tool, and what the server claims of it. */
export interface UpstreamRef {
  name: string;
  /** The upstream's own tool name (`write_file`). */
  tool: string;
  title?: string;
  annotations?: Record<string, unknown>;
}

/** What a kind adds to the owner's View (contract 5: fields at the View's top level). */
export interface KindView {
  /** Cues: the one-time session file path fixed at submit time (never the session UUID, rule 4). */
  session_file?: string;
  /** Cues: the short fingerprint the owner sees (`sess·3f9a1c`). */
  session_fingerprint?: string;
  /** Upstream calls (contract 5 (v2), 7): the server, its own tool name, and what the server claims. */
  upstream?: UpstreamRef;
}
