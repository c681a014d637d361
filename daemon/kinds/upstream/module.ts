/** The upstream kind as registered (kinds/index.ts): the tools of every MCP server behind the gate. */
import type { KindModule } from '../../kind/index.js';
import { UpstreamExecutor } from './executor.js';
import { upstreamKind } from './kind.js';
import { UpstreamSource } from './source.js';

export const upstream: KindModule = {
  kind: upstreamKind,
  source: ({ config, upstreams, log }) =>
    new UpstreamSource(upstreams, log, new UpstreamExecutor(upstreams, config.output_limit_bytes)),
};
