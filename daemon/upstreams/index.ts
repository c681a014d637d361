/**
 * Connections to the MCP servers behind the gate (stdio and HTTP): their registry, probe, limits and the
 * status file `status` reads.
 */
export { dataDirReach } from './data-dir-reach.js';
export { MAX_TOOL_JSON_CHARS } from './limits.js';
export { type LeaseResult, PREVIEW_IDLE_MS, type PreviewLease } from './preview-instances.js';
export { probeUpstream } from './probe.js';
export { type UpstreamLink, UpstreamRegistry, type UpstreamStatus } from './registry.js';
export {
  describeUpstream,
  readUpstreamStatus,
  removeUpstreamStatus,
  withExposed,
  writeUpstreamStatus,
} from './status-file.js';
