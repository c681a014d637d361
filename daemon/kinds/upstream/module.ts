/**
 * The upstream kind as registered (kinds/index.ts): the tools of every MCP server behind the gate, and the
 * previews of their calls while they await review (contract 12), through connections of their own
 * (contract 12 (v4): upstreams/preview-instances.ts).
 */
import { ownsCommand } from '../../config/index.js';
import type { KindModule } from '../../tool-kind/index.js';
import { UpstreamExecutor } from './executor.js';
import { upstreamKind } from './kind.js';
import { PreviewRunner, previewSpecs, recheck } from './previews/index.js';
import { UpstreamSource } from './source.js';

export const upstream: KindModule = {
  kind: upstreamKind,
  source: ({ config, upstreams, log, current }) => {
    // Contract 20: each approved call with a preview is checked again at launch (previews/recheck.ts).
    const world = { registry: upstreams, now: () => Date.now(), revertDays: () => current().revert_days };
    const executor = new UpstreamExecutor(upstreams, config.output_limit_bytes, (c) => recheck(c, world));
    return new UpstreamSource(upstreams, log, executor);
  },
  work({ config, upstreams, log }, broker) {
    // Started even with no upstream yet: a reload may add one (contract 17).
    // Contract 16: a node previews only its own commands, through its own upstreams.
    const runner = new PreviewRunner({
      broker,
      registry: upstreams,
      log,
      own: (c) => ownsCommand(config, c),
    });
    runner.start();
    return runner;
  },
  awaitsPreview(config, c) {
    const ref = c.upstream;
    const entry = ref === undefined ? undefined : config.upstreams[ref.name];
    return ref !== undefined && entry !== undefined && previewSpecs(entry).has(ref.tool);
  },
};
