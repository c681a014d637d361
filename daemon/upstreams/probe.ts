/**
 * `doctor`'s upstream check (contract 1.1 (v2)): starts the upstream once, as the daemon would (same
 * transport, no capabilities), asks for its tools, and stops it. Nothing is called.
 */
import { type Logger, mcpClient } from '../base/index.js';
import type { UpstreamConfig } from '../config/index.js';
import { Confiner } from '../sandbox/index.js';
import { MAX_TOOLS } from './limits.js';
import { openTransport } from './transport.js';

export interface ProbeResult {
  ok: boolean;
  detail: string;
}

/** Connects, lists tools, closes; never rejects. */
export async function probeUpstream(
  name: string,
  config: UpstreamConfig,
  log: Logger,
  timeoutMs = 30_000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProbeResult> {
  const { Client } = await mcpClient();
  let transport: ReturnType<typeof openTransport>;
  try {
    // Confined as the daemon would confine it (contract 21): a probe writes no more than the server could.
    transport = openTransport(name, config, log, env, 'main', new Confiner(env, []));
  } catch (e) {
    return { ok: false, detail: `could not be started: ${(e as Error).message}` };
  }
  const client = new Client({ name: 'ogf-broker-doctor', version: '0' }, { capabilities: {} });
  try {
    await client.connect(transport, { prior: { kind: 'legacy' }, timeout: timeoutMs });
    const { tools } = await client.listTools(undefined, { timeout: timeoutMs, cacheMode: 'bypass' });
    if (tools.length > MAX_TOOLS) {
      return {
        ok: false,
        detail: `lists ${tools.length} tools, more than the ${MAX_TOOLS} the daemon accepts`,
      };
    }
    return { ok: true, detail: `starts and lists ${tools.length} tool${tools.length === 1 ? '' : 's'}` };
  } catch (e) {
    return { ok: false, detail: `did not answer: ${(e as Error).message}` };
  } finally {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
}
