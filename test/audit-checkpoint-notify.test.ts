/**
 * Contract 14: "A `checkpoint` notification (13.1) carries it, so a copy lives outside the machine." A real
 * daemon with a `json` webhook channel asking only for `checkpoint` events, its receiver played over
 * loopback (test/helpers/receivers.ts). `OGF_BROKER_AUDIT_CHECKPOINT_MS` shortens the 10-minute timer (it can
 * only shorten it). The message's signature must verify with `audit.pub` over the canonical
 * `{"seq","hash","at"}`: what left the machine proves the chain's tip without the daemon.
 */
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, ownerCatalog, queue } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';

let d: RunningDaemon;
let ai: Client;
let hook: HttpReceiver;
let dataDir: string;

beforeAll(async () => {
  hook = await HttpReceiver.start('ok');
  dataDir = makeDataDir();
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(join(dataDir, 'marks.txt'), {
      notify: [{ id: 'tip', type: 'webhook', url: hook.url(), format: 'json', events: ['checkpoint'] }],
    }),
    env: { OGF_BROKER_AUDIT_CHECKPOINT_MS: '1000' },
  });
  ai = await mcpClient(d);
});

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  await hook?.close();
});

describe('[c14.checkpoints] the checkpoint notification (contracts 14, 13.1)', () => {
  it('a signed checkpoint leaves the machine as a json message that verifies with audit.pub', async () => {
    await queue(ai, 'mark', { word: 'tip' });
    const message = await waitFor(
      () =>
        hook.requests
          .map((r) => JSON.parse(r.body) as Record<string, unknown>)
          .find((m) => m.event === 'checkpoint'),
      'a checkpoint notification',
      30_000,
    );
    expect(message).toMatchObject({ event: 'checkpoint' });
    const { seq, hash, at, signature } = message as {
      seq: number;
      hash: string;
      at: string;
      signature: string;
    };
    expect(seq).toBeGreaterThanOrEqual(2);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const pub = createPublicKey(readFileSync(join(dataDir, 'audit.pub'), 'utf8'));
    const payload = Buffer.from(canonicalize({ seq, hash, at }) ?? '', 'utf8');
    expect(verify(null, payload, pub, Buffer.from(signature, 'base64'))).toBe(true);
    // A forged tip does not verify: the check above can fail.
    const forged = Buffer.from(canonicalize({ seq, hash: '0'.repeat(64), at }) ?? '', 'utf8');
    expect(verify(null, forged, pub, Buffer.from(signature, 'base64'))).toBe(false);
    // Only the checkpoint event was asked for: no waiting message went to this channel.
    expect(hook.requests.map((r) => (JSON.parse(r.body) as { event: string }).event)).not.toContain(
      'waiting',
    );
    // And the chain it signs verifies, daemon running.
    const v = await runCli(['audit', 'verify', '--data-dir', dataDir]);
    expect(v.code, v.stderr).toBe(0);
  });
});
