/**
 * The runtime that applies the pure decisions (architecture.md "The house"): the broker, the only writer of
 * command state, and what it is made of — its actions (submit, command and grant actions), the group
 * commit, the working and committed views of commands and grants, launches, deadlines, waiters, listeners,
 * recovery at start, the committed reads, the retention pass and the other nodes of a fleet.
 */
export { Broker } from './broker.js';
export { faultsFromEnv } from './fault-points.js';
export { RetentionPass } from './retention-pass.js';
