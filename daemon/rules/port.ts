/**
 * The rules as the core's port (core/ports/rules.ts): the config's rule book and `when` grants compiled in the
 * same environment, over the same variables. `upstreams` (the config's) says which are stdio servers on this
 * machine: for their commands `path_under` resolves symbolic links (contract 11 v4, facts.ts).
 */
import type { KindPolicies, RulePort } from '../core/index.js';
import type { RuleBook } from './book.js';
import { compileExpression } from './environment.js';
import { factsOf, isStdio, type UpstreamKinds } from './facts.js';

export function rulePort(book: RuleBook, kinds: KindPolicies, upstreams: UpstreamKinds = {}): RulePort {
  const isLocal = isStdio(upstreams);
  return {
    decide: (subject, nowMs) => book.decide(factsOf(subject, kinds, nowMs, isLocal)),
    when(expression) {
      const c = compileExpression(expression);
      if (!c.ok) return c;
      // A `when` that fails for a request is not true: the grant does not approve it.
      return { ok: true, test: (subject, nowMs) => c.run(factsOf(subject, kinds, nowMs, isLocal)) === true };
    },
    get count() {
      return book.count;
    },
  };
}
