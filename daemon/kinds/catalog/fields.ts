/**
 * The catalog kind's names in the shared types (declaration merging, core/model/lifecycle.ts): its tool. Its
 * commands carry no fields of their own: the catalog's argv is the command's `display`.
 */
declare module '../../core/model/lifecycle.js' {
  interface KindTools {
    /** Contract 3.1: a command of the owner's catalog. */
    run_command_wait: true;
  }
}

export {};
