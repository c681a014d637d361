/**
 * One preview computed through the upstream's preview connection (contract 12 (v4)): never the connection
 * approved calls use, so nothing a preview reads, nor a preview connection that ends, can touch them. Shared
 * by the runner (while a call awaits review) and the launch-time check (contract 20, ./recheck.ts).
 */
import { isSdkError } from '../../../base/index.js';
import type { UpstreamRegistry } from '../../../upstreams/index.js';
import type { Computed, PreviewIo } from './call.js';
import { computePreview, type FileSeen } from './compute.js';
import type { RunSpec } from './presets.js';

/** Contract 12: one preview call's deadline. */
export const PREVIEW_CALL_TIMEOUT_MS = 10_000;

/** What one computation is about. */
export interface PreviewJob {
  upstream: string;
  tool: string;
  spec: RunSpec;
  args: Record<string, unknown>;
  signal?: AbortSignal;
  /** Filled in with what a file_diff read (contract 20). */
  seen?: FileSeen;
}

/** The preview, or undefined when `signal` was aborted meanwhile (the command was decided). Never throws. */
export async function previewThrough(
  registry: UpstreamRegistry,
  job: PreviewJob,
): Promise<Computed | undefined> {
  const { upstream, spec, signal } = job;
  const fail = (error: string): Computed => ({ kind: spec.kind, status: 'failed', error });
  // The upstream's tools (what is read-only) come from its own connection: while it is down, no preview.
  const link = await registry.awaitLink(upstream, PREVIEW_CALL_TIMEOUT_MS);
  if (signal?.aborted) return undefined;
  if (link === undefined || !link.open())
    return fail(`the upstream ${upstream} is not connected, so no preview could be made`);
  const leased = await registry.previewLease(upstream);
  if (!leased.ok) {
    if (signal?.aborted) return undefined;
    return fail(`the preview instance of the upstream ${upstream} could not be used: ${leased.why}`);
  }
  const lease = leased.lease;
  let suspect = false;
  const io: PreviewIo = {
    upstream,
    timeoutS: PREVIEW_CALL_TIMEOUT_MS / 1000,
    listed: (name) => registry.tools(upstream)?.find((t) => t.name === name),
    call: async (name, args) => {
      try {
        return await lease.client.request(
          { method: 'tools/call', params: { name, arguments: args } },
          { timeout: PREVIEW_CALL_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) },
        );
      } catch (e) {
        // No answer in time: the instance may be stuck; the next preview gets a fresh one.
        if (isSdkError(e, 'RequestTimeout')) suspect = true;
        throw e;
      }
    },
  };
  try {
    if (signal?.aborted) return undefined;
    return await computePreview(spec, job.tool, job.args, io, job.seen);
  } finally {
    lease.release(suspect);
  }
}
