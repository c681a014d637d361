/**
 * What the core asks a kind of tool instead of switching on it (issue 20 item 1, architecture.md "The house":
 * core/ never names a kind). The kinds answer it (kinds/<kind>/kind.ts, each a tool-kind/kind.ts Kind, registered in
 * kinds/index.ts); the daemon hands the registry to the broker (BrokerDeps.kinds) and the owner fan-out.
 *
 * The kind-specific fields of a request (KindFields) are stored on its command as they come, whatever the
 * kind, as before this seam: the per-session lane (rule 6) follows a session key on any command, and the
 * unit tests drive it with catalog commands.
 */
import type { KindView } from '../../../common/kinds.js';
import type { Command, KindFields, Tool } from './lifecycle.js';

/** What a kind adds to the owner's View (contract 5): the wire's own list (common/kinds.ts). */
export type { KindView } from '../../../common/kinds.js';

/** One kind's answers. */
export interface KindPolicy {
  /** Contracts 3.1, 7: an identical request still PENDING from the same client returns its twin. */
  readonly twinRule: boolean;
  /** Contract 8: why no command of this kind can be granted (the `NotGrantable` message), or undefined. */
  readonly grantRefusal: string | undefined;
  /** Contract 9: whether the config's `approvals` above 1 apply to it. */
  readonly quorum: boolean;
  /** Rule 4: its request hands a secret that lives in memory only, so a restart cannot send it. */
  readonly carriesSecret: boolean;
  /** The one-line summary the owner reads (contract 5 View.summary): what they are asked to allow. */
  summary(command: Command): string;
  /**
   * Contract 11: the server and its own tool name a command of this kind calls (the rules' variables for
   * its server and its `tool`), or undefined when it calls none.
   */
  target?(fields: KindFields): { server: string; tool: string } | undefined;

  /**
   * The summary with every argument value left out (contract 13.1: `Run echo`, `Call write_file on the
   * upstream notes`, `Avatar cue`): what a notification says unless its channel has `include_args`.
   */
  bareSummary(command: Command): string;
}

/** Every kind, by tool, plus what the core asks of a command or request whatever its kind. */
export interface KindPolicies {
  of(tool: Tool): KindPolicy;
  /** Contract 8: why a grant for this command name can never be made (a kind's fixed name), or undefined. */
  refusal(command: string): string | undefined;
  /** The kind-specific fields a request carries, to store on its command. */
  fields(request: KindFields): KindFields;
  /** True when a command and a request agree on the fields that make two requests different (twin rule). */
  sameFields(command: KindFields, request: KindFields): boolean;
  /** Rule 6: the FIFO lane a command's launches take, or undefined when it needs none. */
  laneKey(command: Command): string | undefined;
  /** The kind-specific part of the owner's View (contract 5). */
  view(command: Command): KindView;
  /** Contract 11: what a command or request targets, as its kind says (KindPolicy.target). */
  target(subject: { tool: Tool } & KindFields): { server: string; tool: string } | undefined;
}
