/**
 * The running daemon's answer to `doctor` and `notify test` (contract 17; owner/protocol-diagnose.ts): the
 * checks that depend on what the daemon itself uses — its environment (channels' variables, OGF_BRIDGE_URL),
 * its avatar app, its upstream connections — made in the daemon's process (the database is checked by the
 * terminal too, and `status` shows the daemon's view of it), so the terminal
 * reports the daemon's view and not its own shell's.
 */

import { VERSION } from '../base/index.js';
import type { Config } from '../config/index.js';
import { checkChannels, testChannels } from '../notify/index.js';
import type { Diagnose, DiagnosisCheck } from '../owner/index.js';
import type { UpstreamRegistry } from '../upstreams/index.js';
import { probeBridge } from './bridge-probe.js';

/** The avatar app answers an `ogf-bridge/1` handshake (doctor's check, here or in the running daemon). */
export async function checkBridge(config: Config): Promise<DiagnosisCheck> {
  const bridge = config.ogf_bridge;
  if (bridge === null) {
    return {
      name: 'avatar app',
      ok: true,
      detail:
        'the OGF bridge is off (no ogf_bridge in config, no OGF_BRIDGE_URL): ogf_cue answers OgfBridgeNotConfigured',
    };
  }
  const r = await probeBridge(
    bridge.url,
    Math.max(bridge.delivery_timeout_ms, 2000),
    `ogf-broker/${VERSION}`,
  );
  return { name: 'avatar app', ok: r.ok, detail: r.detail };
}

export function diagnose(o: {
  /** The config in force (a reload replaces it: live-config.ts). */
  config: () => Config;
  env: NodeJS.ProcessEnv;
  upstreams: UpstreamRegistry;
  /** The daemon's own URL (links point at public_url when there is one). */
  base: () => string;
}): Diagnose {
  const { env } = o;
  return {
    get configSha256() {
      return o.config().configSha256;
    },
    async doctor() {
      const config = o.config();
      const checks: DiagnosisCheck[] = [];
      checks.push(await checkBridge(config));
      for (const u of o.upstreams.status()) {
        const ok = u.state === 'connected';
        checks.push({
          name: `upstream ${u.name}`,
          ok,
          detail: ok
            ? `connected, ${u.tools} tool${u.tools === 1 ? '' : 's'} listed`
            : `${u.state}${u.why === undefined ? '' : `: ${u.why}`}`,
        });
      }
      checks.push(...checkChannels(config.notify, env));
      return checks;
    },
    async notifyTest(channel) {
      const config = o.config();
      const ids = config.notify.map((c) => c.id);
      if (ids.length === 0) return 'the running daemon’s config has no notify channels';
      if (channel !== undefined && !ids.includes(channel))
        return `channel must be one of ${ids.join(', ')}, got ${JSON.stringify(channel)}`;
      const results = await testChannels(
        config.notify.filter((c) => channel === undefined || c.id === channel),
        env,
        config.public_url ?? o.base(),
      );
      return results.map(({ id, kind, attempt: a }) => ({
        id,
        kind,
        ok: a.ok,
        ...(a.status === undefined ? {} : { status: a.status }),
        ...('error' in a && a.error !== undefined ? { error: a.error } : {}),
      }));
    },
  };
}
