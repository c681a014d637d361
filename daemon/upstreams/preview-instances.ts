/**
 * The connections previews use (contract 12 (v4) "Previews cannot harm what runs"): never the one approved
 * calls go through. The AI alone chooses what a preview reads, and a preview answer that broke the shared
 * connection (over the 8 MiB message bound) ended the owner-approved call in flight `UNKNOWN` and kept the
 * upstream down (issue 35 finding 3). Here each upstream gets, on demand, a preview connection of its own —
 * for a stdio upstream a second instance of the server (transport.ts `stdioSpawn`: confined, nothing writable), for an HTTP upstream a
 * session of its own — opened when a preview needs it and stopped after PREVIEW_IDLE_MS without a preview
 * call, and when the daemon stops. Whatever happens to it fails previews only:
 *
 * ```
 *  (none) ──lease──▶ starting ──initialize──▶ open ──last lease released──▶ idle ──60 s──▶ stopped
 *                       │                      │  ▲                            │
 *                       └─ fails: that lease   │  └──────── lease ─────────────┘
 *                          fails, next starts  ├─ closes (exit, garbage, a message over 8 MiB) ──▶ gone
 *                                              └─ a call timed out ──▶ retired: no new lease; stopped
 *                                                 2 s after its last call ends (a server whose threads hang)
 * ```
 *
 * A lease of a gone or retired instance never reaches it again: the next lease starts a fresh one. The clock
 * is injected (architecture.md rule 7), so a unit test sees the idle stop without waiting.
 */
import type { Client, Transport } from '@modelcontextprotocol/client';
import {
  type Clock,
  type Logger,
  mcpClient,
  mcpClientIfLoaded,
  mcpClientLoaded,
  systemClock,
} from '../base/index.js';
import type { UpstreamConfig } from '../config/index.js';

/** Contract 12 (v4): a preview instance with no preview call for this long is stopped. */
export const PREVIEW_IDLE_MS = 60_000;
/**
 * A retired instance (a call of it timed out) is stopped this long after its last call ended: time for it
 * to hear the `notifications/cancelled` sent at the deadline, without a stuck process living on for 60 s.
 */
export const RETIRED_GRACE_MS = 2000;

/** One preview connection lent to one preview computation. */
export interface PreviewLease {
  client: Client;
  /** True while this connection is open. */
  open(): boolean;
  /**
   * The computation is over. `suspect`: a call of it got no answer in time, so the instance may be stuck
   * (the filesystem server reading a FIFO blocks its worker threads): no new call goes to it, and it is
   * stopped once its calls in flight are over.
   */
  release(suspect?: boolean): void;
}

export type LeaseResult = { ok: true; lease: PreviewLease } | { ok: false; why: string };

/** Opens the preview transport of one upstream (transport.ts with `instance: "preview"`). */
export type OpenPreviewTransport = (name: string, config: UpstreamConfig) => Transport;

export interface PreviewInstancesDeps {
  version: string;
  log: Logger;
  open: OpenPreviewTransport;
  clock?: Clock;
  /** How long the initialize handshake may take. */
  handshakeMs: number;
}

interface Instance {
  name: string;
  client: Client;
  transport: Transport;
  /** undefined once initialized, else why it could not be. */
  ready: Promise<string | undefined>;
  leases: number;
  retired: boolean;
  ended: boolean;
  idle: { cancel(): void } | undefined;
}

export class PreviewInstances {
  readonly #deps: PreviewInstancesDeps;
  readonly #clock: Clock;
  /** The instance new leases of each upstream go to. */
  readonly #current = new Map<string, Instance>();
  /** Every instance not stopped yet (retired ones included), for close(). */
  readonly #live = new Set<Instance>();
  #closed = false;

  constructor(deps: PreviewInstancesDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Instances running now (tests read it). */
  get running(): number {
    return this.#live.size;
  }

  /** A preview connection to upstream `name`, started when there is none; or why none could be had. */
  async lease(name: string, config: UpstreamConfig): Promise<LeaseResult> {
    // Before anything is read: from here to the instance's start nothing awaits, so two leases start one.
    if (mcpClientIfLoaded() === undefined) await mcpClient();
    if (this.#closed) return { ok: false, why: 'the daemon is stopping' };
    let inst = this.#current.get(name);
    if (inst === undefined) {
      const started = this.#start(name, config);
      if (!started.ok) return started;
      inst = started.inst;
      this.#current.set(name, inst);
    }
    const held = inst;
    held.leases++;
    held.idle?.cancel();
    held.idle = undefined;
    let released = false;
    const release = (suspect = false) => {
      if (released) return;
      released = true;
      this.#release(held, suspect);
    };
    const why = await held.ready;
    if (why !== undefined || held.ended) {
      release();
      return { ok: false, why: why ?? 'it ended before it could be used' };
    }
    return { ok: true, lease: { client: held.client, open: () => !held.ended, release } };
  }

  /**
   * A reload changed or removed upstream `name` (contract 17): its instance takes no new lease and stops
   * once its previews in flight are over; the next preview starts one with the new entry.
   */
  retire(name: string): void {
    const inst = this.#current.get(name);
    if (inst === undefined) return;
    this.#current.delete(name);
    inst.retired = true;
    if (inst.leases === 0) void this.#stop(inst, 'its entry changed in the config');
  }

  /** Stops every preview instance. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#live].map((i) => this.#stop(i, 'the daemon stops')));
  }

  #start(name: string, config: UpstreamConfig): { ok: true; inst: Instance } | { ok: false; why: string } {
    const log = this.#deps.log;
    let transport: Transport;
    try {
      transport = this.#deps.open(name, config);
    } catch (e) {
      return { ok: false, why: `it could not be started: ${(e as Error).message}` };
    }
    // No capabilities (contract 7), as the upstream's own connection.
    const { Client } = mcpClientLoaded();
    const client = new Client({ name: 'ogf-broker', version: this.#deps.version }, { capabilities: {} });
    const inst: Instance = {
      name,
      client,
      transport,
      ready: Promise.resolve(undefined),
      leases: 0,
      retired: false,
      ended: false,
      idle: undefined,
    };
    this.#live.add(inst);
    client.onerror = (e) =>
      log.log('warn', 'upstream_error', { upstream: name, instance: 'preview', error: e.message });
    client.onclose = () => {
      if (!inst.ended) void this.#stop(inst, 'its connection closed');
    };
    inst.ready = client
      .connect(transport, { prior: { kind: 'legacy' }, timeout: this.#deps.handshakeMs })
      .then(
        () => undefined,
        (e: unknown) => {
          void this.#stop(inst, 'it did not answer initialize');
          return `it did not answer initialize: ${(e as Error)?.message ?? String(e)}`;
        },
      );
    log.log('info', 'upstream_preview_started', { upstream: name });
    return { ok: true, inst };
  }

  #release(inst: Instance, suspect: boolean): void {
    inst.leases--;
    if (suspect && !inst.retired) {
      inst.retired = true;
      if (this.#current.get(inst.name) === inst) this.#current.delete(inst.name);
    }
    if (inst.leases > 0 || inst.ended) return;
    const retired = inst.retired;
    inst.idle = this.#clock.setTimeout(
      () => {
        if (inst.leases === 0)
          void this.#stop(inst, retired ? 'a preview call got no answer in time' : 'idle');
      },
      retired ? RETIRED_GRACE_MS : PREVIEW_IDLE_MS,
    );
  }

  async #stop(inst: Instance, why: string): Promise<void> {
    if (inst.ended) return;
    inst.ended = true;
    inst.idle?.cancel();
    inst.idle = undefined;
    if (this.#current.get(inst.name) === inst) this.#current.delete(inst.name);
    this.#live.delete(inst);
    this.#deps.log.log('info', 'upstream_preview_stopped', { upstream: inst.name, why });
    try {
      await inst.client.close();
    } catch {
      // Already closed.
    }
    try {
      await inst.transport.close();
    } catch {
      // Already closed.
    }
  }
}
