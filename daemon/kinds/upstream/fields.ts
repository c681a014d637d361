/**
 * The upstream kind's names in the shared types (declaration merging, core/model/lifecycle.ts and
 * core/model/kind-policy.ts): its tool, and which server and tool a call goes to, stored and shown (contract 5
 * View.upstream, 7).
 */

/** Upstream calls (contract 5 View.upstream, 7): which server and tool, and what the server claims of it. */
export interface UpstreamRef {
  name: string;
  /** The upstream's own tool name (`write_file`). */
  tool: string;
  title?: string;
  annotations?: Record<string, unknown>;
}

declare module '../../core/model/lifecycle.js' {
  interface KindTools {
    /** Contract 7: a tool of an upstream MCP server behind the gate. */
    upstream: true;
  }
  interface KindFields {
    /** Upstream calls (contract 7). */
    upstream?: UpstreamRef;
  }
}

declare module '../../core/model/kind-policy.js' {
  interface KindView {
    /** Upstream calls (contract 5 (v2), 7): the server, its own tool name, and what the server claims. */
    upstream?: UpstreamRef;
  }
}
