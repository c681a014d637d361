/**
 * The MCP edge (contracts.md 2–3, 10): Streamable HTTP in both generations, Tasks, and the stdio relay;
 * plus the input parsing and output schemas the kinds' sources share.
 */
export { createMcpEdge, type McpEdge } from './edge.js';
export { parseInput, waitSeconds } from './input.js';
export { Relay } from './relay.js';
export {
  AFTER_PENDING,
  JUSTIFICATION_MAX,
  REQUEST_ID_PATTERN,
  resultOutputSchema,
  waitSecondsJson,
} from './schemas.js';
export { createRelayServer } from './stdio.js';
export { protoKeysInSight } from './stdio-lines.js';
