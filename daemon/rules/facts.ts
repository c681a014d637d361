/**
 * The variables of a rule (contracts.md 11) for a request or a recorded command: `upstream` and `tool` are
 * what its kind says it targets (core/model/kind-policy.ts `target`), `""` for other commands. When that upstream
 * is a stdio server on this machine (`isLocal`), `path_under` resolves symbolic links (contract 11 v4,
 * links.ts): the server reads this machine's files, so where a link leads decides what it touches. An HTTP
 * upstream's files are not ours to look at: its paths are read lexically.
 */
import type { KindPolicies, RuleSubject } from '../core/index.js';
import type { RuleFacts } from './environment.js';
import { linkResolverForOneRequest } from './links.js';

/** Whether an upstream (by name) is a stdio server started on this machine. */
export type LocalUpstream = (server: string) => boolean;

/** The config's upstreams as far as this asks: contract 7, `argv` (stdio) or `url` (HTTP). */
export type UpstreamKinds = Readonly<Record<string, { argv?: unknown }>>;

/** Contract 7: an upstream with `argv` is a stdio server the daemon starts here (one with `url` is not). */
export function isStdio(upstreams: UpstreamKinds): LocalUpstream {
  return (server) => Object.hasOwn(upstreams, server) && upstreams[server]?.argv !== undefined;
}

export function factsOf(
  s: RuleSubject,
  kinds: KindPolicies,
  nowMs: number,
  isLocal?: LocalUpstream,
): RuleFacts {
  const target = kinds.target(s);
  const facts: RuleFacts = {
    client: s.client,
    command: s.command,
    upstream: target?.server ?? '',
    tool: target?.tool ?? '',
    args: s.args,
    justification: s.justification ?? '',
    now: new Date(nowMs),
  };
  if (target !== undefined && isLocal?.(target.server) === true) facts.links = linkResolverForOneRequest();
  return facts;
}
