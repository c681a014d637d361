/**
 * A kind of tool (issue 20 item 1, architecture.md "The house"): everything one kind means lives in its
 * folder, kinds/<kind>/ — its source (tools, validation into a submit request), its executor, the names it
 * adds to the shared types (fields.ts) and this policy, which the core asks instead of switching on the
 * kind (core/model/kind-policy.ts). kinds/index.ts registers them, one line each. The panel has its own
 * per-kind renderers (owner-ui/panel/kinds.ts), since the panel imports no daemon code.
 *
 * A preview (read-only calls while a command awaits review) will plug in here.
 */
import type { Command, KindFields, KindPolicy, KindView, Tool, View } from '../core/index.js';

export interface Kind extends KindPolicy {
  readonly tool: Tool;
  /**
   * The command name all its commands share, when grants can name it (contract 8: a grant for it is
   * refused with `grantRefusal`); absent when each command has its own name.
   */
  readonly commandName?: string;
  /** Its request fields (KindFields) stored on its commands, in the order they are stored. */
  readonly fields: readonly (keyof KindFields)[];
  /** Those that make two requests different (the twin rule, request_id reuse: contract 3.1). */
  readonly identity: readonly (keyof KindFields)[];
  /** Those the owner's View carries (contract 5). */
  readonly shown: readonly (keyof KindFields & keyof KindView)[];
  /** The field that names its commands' FIFO lane (rule 6), if they take one. */
  readonly lane?: keyof KindFields;
  /** Its lines under a command in `ogf-broker list` (daemon/owner-terminal/format.ts), every text escaped. */
  lines(view: View): string[];
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** `Run <command>`: a command's summary without its argument values (contract 13.1). */
export function bareRunSummary(command: Command): string {
  return `Run ${command.command}`;
}

/** `Run <command> with k=v ...`: the summary of a command that is its name and params (contract 5). */
export function runSummary(command: Command): string {
  const params = Object.entries(command.args).map(([k, v]) => `${k}=${describeValue(v)}`);
  return params.length === 0 ? `Run ${command.command}` : `Run ${command.command} with ${params.join(' ')}`;
}
