/**
 * The cue kind's names in the shared types (declaration merging, core/model/lifecycle.ts and core/model/kind-policy.ts):
 * its tool, the fields its commands store, and those the owner's View shows (contract 5). Never the session
 * UUID (rule 4): only what is derived from it through an HMAC.
 */
declare module '../../core/model/lifecycle.js' {
  interface KindTools {
    /** Contract 3.3: an avatar cue through the OGF bridge. */
    ogf_cue: true;
  }
  interface KindFields {
    /** Cues: the one-time session file path fixed at submit time. */
    session_file?: string;
    /** Cues: the per-session FIFO key (an HMAC of the lower-cased session UUID, never the UUID). */
    session_key?: string;
    /** Cues: the short fingerprint the owner sees (`sess·3f9a1c`). */
    session_fingerprint?: string;
  }
}

declare module '../../core/model/kind-policy.js' {
  interface KindView {
    session_file?: string;
    session_fingerprint?: string;
  }
}

export {};
