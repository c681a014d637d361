/**
 * Rules the owner writes, and `when` grants (contracts.md 11): CEL expressions over a request, compiled
 * once in one typed environment (environment.ts: `matches` on RE2, `path_under`), the config's rule book
 * (book.ts), the core's port (port.ts), and testing them against the recorded history (policy-test.ts).
 */
export {
  type CompiledRule,
  compileRules,
  RULE_ERROR_LOG_MS,
  RuleBook,
  type RuleDecision,
  type RuleEntry,
} from './book.js';
export { type Compiled, compileExpression, MAX_EXPRESSION_CHARS, type RuleFacts } from './environment.js';
export { factsOf, isStdio, type LocalUpstream, type UpstreamKinds } from './facts.js';
export { linkResolverForOneRequest, MAX_STEPS as MAX_LINK_STEPS, resolveLinks } from './links.js';
export { type LinkResolver, lexicalPath, pathUnder, withLinks } from './path-under.js';
export {
  type BookReport,
  grantMatcher,
  type HistoryPage,
  POLICY_TEST_DEFAULT,
  POLICY_TEST_MAX,
  type PolicyTestAnswer,
  policyTest,
  ruleMatcher,
  testBook,
} from './policy-test.js';
export { rulePort } from './port.js';
export { readRulesStatus, removeRulesStatus, writeRulesStatus } from './status-file.js';
