/**
 * The cue kind's stored fields in the shared types (declaration merging, core/model/lifecycle.ts KindFields): what
 * its commands store beyond the common fields. Its tool's name and the fields the owner's View shows are the
 * owner protocol's (common/kinds.ts). Never the session UUID (rule 4): only what is derived from it through
 * an HMAC.
 */
declare module '../../core/model/lifecycle.js' {
  interface KindFields {
    /** Cues: the one-time session file path fixed at submit time. */
    session_file?: string;
    /** Cues: the per-session FIFO key (an HMAC of the lower-cased session UUID, never the UUID). */
    session_key?: string;
    /** Cues: the short fingerprint the owner sees (`sess·3f9a1c`). */
    session_fingerprint?: string;
  }
}

export {};
