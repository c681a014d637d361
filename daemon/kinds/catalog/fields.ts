/**
 * The catalog kind's fields in the shared types (declaration merging, core/model/lifecycle.ts KindFields): the reach
 * of the process it starts (contract 21), in words fixed at submit. Its tool's name is the owner protocol's
 * (common/kinds.ts Tool); the catalog's argv is the command's `display`.
 */
declare module '../../core/model/lifecycle.js' {
  interface KindFields {
    /** Contract 21: "confined: writes only under …; no network" or "not confined" (common/kinds.ts). */
    reach?: string;
  }
}

export {};
