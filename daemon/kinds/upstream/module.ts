/**
 * The upstream kind as registered (kinds/index.ts): the tools of every MCP server behind the gate, and the
 * previews of their calls while they await review (contract 12), through the same connections.
 */
import type { KindModule } from '../../kind/index.js';
import { UpstreamExecutor } from './executor.js';
import { upstreamKind } from './kind.js';
import { PreviewRunner } from './previews/index.js';
import { UpstreamSource } from './source.js';

export const upstream: KindModule = {
  kind: upstreamKind,
  source: ({ config, upstreams, log }) =>
    new UpstreamSource(upstreams, log, new UpstreamExecutor(upstreams, config.output_limit_bytes)),
  work({ upstreams, log }, broker) {
    if (upstreams.names().length === 0) return undefined;
    const runner = new PreviewRunner({ broker, registry: upstreams, log });
    runner.start();
    return runner;
  },
};
