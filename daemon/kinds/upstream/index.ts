/**
 * The upstream kind: tools of the MCP servers behind the gate, their source, executor and policy.
 */
export { UpstreamExecutor } from './executor.js';
export { upstreamKind } from './kind.js';
export { upstream } from './module.js';
export { PreviewRunner } from './previews/index.js';
export { planRevert, type RevertPlan, type RevertWorld } from './revert.js';
export { UpstreamSource } from './source.js';
