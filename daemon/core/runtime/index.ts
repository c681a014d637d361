/**
 * TODO
 */
export { Broker } from './broker.js';
export { faultsFromEnv } from './fault-points.js';
export { RetentionPass } from './retention-pass.js';
