/**
 * The upstream executor (contract 7): forwards exactly the approved arguments as one `tools/call`, after
 * `running` is durable (rule 3), and maps what happened to one outcome. It sends once: there is no retry
 * anywhere on this path (the SDK's request is used as is, with no era probe and no input_required rounds,
 * since connections are legacy-era), and a restart finds a sent call `running` and makes it
 * `unknown`/`DaemonRestarted` (lifecycle.ts) rather than sending it again.
 *
 * | what happened                                              | outcome                               |
 * |------------------------------------------------------------|---------------------------------------|
 * | not connected when the call was to be sent (never sent)    | failed / UpstreamUnavailable          |
 * | JSON-RPC error -32700, -32600, -32601, -32602              | failed / UpstreamRejected             |
 * | a result with isError: true                                | failed / UpstreamToolError            |
 * | a result without isError                                   | succeeded                             |
 * | any other JSON-RPC error                                   | unknown / UpstreamError               |
 * | the connection or process ended before an answer           | unknown / DeliveryUnconfirmed         |
 * | no answer within timeout_s (then notifications/cancelled)  | unknown / KilledAtDeadline            |
 */
import { isProtocolError, isSdkError } from '../../base/index.js';
import type { Command, ExecutionIo, ExecutionReport, Executor, Outcome } from '../../core/index.js';
import { cutUtf8 } from '../../core/index.js';
import type { UpstreamLink, UpstreamRegistry } from '../../upstreams/index.js';
import type { Recheck } from './previews/index.js';

/** Codes that mean the upstream refused the request before running anything (contract 7). */
const REFUSED_CODES = new Set([-32700, -32600, -32601, -32602]);

/** Contract 7: the upstream's result is kept whole up to 4 MiB of JSON. */
export const UPSTREAM_RESULT_MAX_BYTES = 4 * 1024 * 1024;

/** How long a call approved while its upstream is still (re)connecting waits for the connection. */
const CONNECT_WAIT_MS = 30_000;

/** The outcome that keeps the upstream's answer (contract 7: whole up to 4 MiB, else cut text). */
function keep(result: Record<string, unknown>, outputLimitBytes: number): Outcome {
  const json = JSON.stringify(result);
  if (Buffer.byteLength(json) <= UPSTREAM_RESULT_MAX_BYTES) return { upstream_result: result };
  return { stdout: cutUtf8(json, outputLimitBytes) ?? json, output_truncated: true };
}

export class UpstreamExecutor implements Executor {
  readonly #registry: UpstreamRegistry;
  readonly #outputLimitBytes: number;
  readonly #recheck: (command: Command) => Promise<Recheck>;

  /** `recheck`: contract 20's launch-time preview (./previews/recheck.ts); default: none (send as approved). */
  constructor(
    registry: UpstreamRegistry,
    outputLimitBytes: number,
    recheck: (command: Command) => Promise<Recheck> = async () => ({ kind: 'launch' }),
  ) {
    this.#registry = registry;
    this.#outputLimitBytes = outputLimitBytes;
    this.#recheck = recheck;
  }

  async execute(command: Command, io: ExecutionIo): Promise<ExecutionReport> {
    const ref = command.upstream;
    const config = ref === undefined ? undefined : this.#registry.config(ref.name);
    if (ref === undefined || config === undefined) {
      return {
        kind: 'aborted',
        reason: 'UpstreamUnavailable',
        detail: `The upstream of ${command.command} is no longer configured, so nothing was sent.`,
      };
    }
    const link = await this.#registry.awaitLink(ref.name, CONNECT_WAIT_MS);
    if (link === undefined || !link.open()) return this.#unavailable(ref.name);
    // Contract 20: the preview made again, before `running`; changed → nothing is sent, back to the owners.
    const checking = this.#recheck(command);
    // An owner's approval of a ready preview: its commit waits for the check (briefly), so `running` (or the
    // way back) joins that transaction. Never for a call decided at submit (a grant, a rule, a policy): the
    // AI could then make every batch wait on a slow upstream's read.
    if (command.preview?.status === 'ready') io.beforeRunning?.(checking);
    const checked = await checking;
    if (checked.kind === 'rebound') return checked.rebound;
    // Rule 3: `running` is durable before anything is sent.
    if (!(await io.markRunning(checked.bound))) return this.#unavailable(ref.name);
    if (!link.open()) {
      return {
        kind: 'failed',
        reason: 'UpstreamUnavailable',
        detail: `The upstream ${ref.name} disconnected before the call was sent, so nothing was sent.`,
        outcome: {},
      };
    }
    return this.#send(link, command, ref.name, ref.tool, config.timeout_s);
  }

  #unavailable(name: string): ExecutionReport {
    return {
      kind: 'aborted',
      reason: 'UpstreamUnavailable',
      detail: `The upstream ${name} was not connected when the call was to be sent, so nothing was sent.`,
    };
  }

  async #send(
    link: UpstreamLink,
    command: Command,
    upstream: string,
    tool: string,
    timeoutS: number,
  ): Promise<ExecutionReport> {
    let result: Record<string, unknown>;
    try {
      // Exactly the approved args (rule 1): the object the owner saw, as stored.
      result = (await link.client.request(
        { method: 'tools/call', params: { name: tool, arguments: command.args } },
        { timeout: timeoutS * 1000 },
      )) as unknown as Record<string, unknown>;
    } catch (e) {
      return this.#failure(e, upstream, timeoutS);
    }
    const outcome = keep(result, this.#outputLimitBytes);
    if (result.isError === true) {
      return {
        kind: 'failed',
        reason: 'UpstreamToolError',
        detail: `The upstream ${upstream} answered that ${tool} failed (isError).`,
        outcome,
      };
    }
    return { kind: 'succeeded', outcome };
  }

  #failure(e: unknown, upstream: string, timeoutS: number): ExecutionReport {
    if (isProtocolError(e) && typeof e.code === 'number') {
      const said = `${e.code}: ${e.message}`.slice(0, 500);
      if (REFUSED_CODES.has(e.code)) {
        return {
          kind: 'failed',
          reason: 'UpstreamRejected',
          detail: `The upstream ${upstream} refused the call before running it (${said}).`,
          outcome: {},
        };
      }
      return {
        kind: 'unknown',
        reason: 'UpstreamError',
        detail: `The upstream ${upstream} answered an error (${said}); the call may have had its effect.`,
        outcome: {},
      };
    }
    if (isSdkError(e, 'NotConnected')) {
      return {
        kind: 'failed',
        reason: 'UpstreamUnavailable',
        detail: `The upstream ${upstream} was not connected when the call was to be sent, so nothing was sent.`,
        outcome: {},
      };
    }
    if (isSdkError(e, 'RequestTimeout')) {
      return {
        kind: 'unknown',
        reason: 'KilledAtDeadline',
        detail: `The upstream ${upstream} did not answer within timeout_s (${timeoutS} s); the daemon sent notifications/cancelled. The call may have had its effect.`,
        outcome: {},
      };
    }
    if (isSdkError(e, 'ConnectionClosed', 'SendFailed')) {
      return {
        kind: 'unknown',
        reason: 'DeliveryUnconfirmed',
        detail: `The connection to the upstream ${upstream} ended after the call was sent, before an answer; the call may have had its effect.`,
        outcome: {},
      };
    }
    return {
      kind: 'unknown',
      reason: 'UpstreamError',
      detail: `The upstream ${upstream}'s answer could not be read (${(e as Error).message.slice(0, 300)}); the call may have had its effect.`,
      outcome: {},
    };
  }
}
