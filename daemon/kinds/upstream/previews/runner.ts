/**
 * Previews while a call awaits review (contract 12). The runner follows the broker's committed changes:
 * an upstream call with a preview configured for its tool (./presets.ts) that starts awaiting review gets
 * its preview computed in the background (./compute.ts) and set when it arrives, with `preview: {status:
 * "pending"}` first when the read takes longer than PENDING_AFTER_MS — each an `amend` (the same version: an
 * approval sent before it stays valid) with its audit entry.
 *
 * Bounds: each preview call at most 10 s (then cancelled) and 1 MiB; at most 4 preview calls at once per
 * upstream (./slots.ts); 64 MiB of previews across the calls awaiting review (./budget.ts: snapshots stay
 * readable at the PENDING caps); made only while the command awaits review — a decision, an expiry or a cancel
 * aborts a call in flight or still queued, and a late answer is dropped (the broker refuses to amend a
 * decided command). A preview call is no command of its own and goes through the upstream's preview
 * connection (contract 12 (v4): a second instance of a stdio server, an HTTP upstream's own session, never
 * the connection approved calls use), so no MCP client ever sees it; nothing of its content is logged. A
 * command decided at submit (a grant, a rule, the read-only policy) never awaits review, so it gets no
 * preview call. After a restart, calls still awaiting review whose preview was pending get it computed again.
 */
import { type Clock, iso, type Logger, systemClock } from '../../../base/index.js';
import type { ActionResult, Amendment, Command, Preview, Queued } from '../../../core/index.js';
import type { UpstreamRegistry } from '../../../upstreams/index.js';
import { PREVIEW_BUDGET_BYTES, PreviewBudget } from './budget.js';
import type { Computed } from './call.js';
import { previewSpecs, type RunSpec } from './presets.js';
import { previewRecord } from './record.js';
import { Slots } from './slots.js';
import { PREVIEW_CALL_TIMEOUT_MS, previewThrough } from './through.js';

export { PREVIEW_CALL_TIMEOUT_MS };
/** Contract 12: how many preview calls may run at once per upstream. */
export const PREVIEW_SLOTS = 4;
/** A read still running this long after the call started awaiting review is announced as `pending`. */
export const PENDING_AFTER_MS = 200;

/** What the runner needs of the broker. */
export interface PreviewBroker {
  subscribe(listener: (command: Command) => void): () => void;
  /** A new command awaiting review, before its commit (BrokerApi.subscribeQueued). */
  subscribeQueued?(listener: (queued: Queued) => void): () => void;
  snapshot(finalLimit?: number): Command[];
  amend(id: string, amendment: Amendment): Promise<ActionResult>;
}

export interface PreviewRunnerDeps {
  broker: PreviewBroker;
  registry: UpstreamRegistry;
  log: Logger;
  clock?: Clock;
  /** Contract 16: the commands this node previews (its own); default all. */
  own?: (c: Command) => boolean;
}

/** UTF-8 bytes of the text a preview shows. */
function shownBytes(p: Preview): number {
  return Buffer.byteLength(p.diff ?? p.text ?? '');
}

export class PreviewRunner {
  readonly #broker: PreviewBroker;
  readonly #registry: UpstreamRegistry;
  readonly #log: Logger;
  readonly #clock: Clock;
  /** The preview in progress of each command, by id: aborted when it is decided. */
  readonly #jobs = new Map<string, AbortController>();
  readonly #slots = new Map<string, Slots>();
  /** The bytes of preview text the calls awaiting review hold together (./budget.ts). */
  readonly #budget = new PreviewBudget();
  readonly #specs = new Map<string, ReadonlyMap<string, RunSpec>>();
  #off: (() => void) | undefined;
  #closed = false;
  readonly #own: PreviewRunnerDeps['own'];

  constructor(deps: PreviewRunnerDeps) {
    this.#own = deps.own;
    this.#broker = deps.broker;
    this.#registry = deps.registry;
    this.#log = deps.log;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Follows the broker from now on, and previews what already awaits review without one (a restart). */
  start(): void {
    if (this.#off !== undefined) throw new Error('PreviewRunner.start() called twice');
    const committed = this.#broker.subscribe((c) => this.#seen(c));
    // The read starts as the call is queued, while its commit is written (bench row 13: it waited for that
    // fsync before). Read-only, on the preview connection; what it finds is amended only after the commit
    // (the amend queues behind it), and a commit that fails leaves no command to amend.
    const queued = this.#broker.subscribeQueued?.((q) => this.#seen(q.command, q.committed));
    this.#off = () => {
      committed();
      queued?.();
    };
    for (const c of this.#broker.snapshot(0)) this.#seen(c);
  }

  /** Stops following and aborts every preview call in flight. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#off?.();
    for (const job of this.#jobs.values()) job.abort();
    this.#jobs.clear();
  }

  /** `committed`: the call was heard as queued, before its commit (start()); settles with that commit. */
  #seen(c: Command, committed?: Promise<boolean>): void {
    const ref = c.upstream;
    if (this.#closed || ref === undefined || this.#own?.(c) === false) return;
    if (c.phase.state !== 'awaiting_review') {
      // Contract 12: preview calls are made only while the command awaits review.
      this.#jobs.get(c.id)?.abort();
      this.#budget.release(c.id);
      return;
    }
    // A preview already made (a restart's snapshot) counts against the budget.
    if (c.preview?.status === 'ready') this.#budget.take(c.id, shownBytes(c.preview));
    if (this.#jobs.has(c.id) || (c.preview !== undefined && c.preview.status !== 'pending')) return;
    const spec = this.#specOf(ref.name, ref.tool);
    if (spec === undefined) return;
    const job = new AbortController();
    this.#jobs.set(c.id, job);
    void this.#run(c, ref.name, ref.tool, spec, job, committed)
      .catch((e: unknown) =>
        this.#log.log('error', 'preview_not_recorded', {
          id: c.id,
          error: (e as Error)?.message ?? String(e),
        }),
      )
      .finally(() => {
        if (this.#jobs.get(c.id) === job) this.#jobs.delete(c.id);
      });
  }

  async #run(
    c: Command,
    upstream: string,
    tool: string,
    spec: RunSpec,
    job: AbortController,
    committed: Promise<boolean> = Promise.resolve(true),
  ): Promise<void> {
    // "pending" is told to owners only when the read is slow (PENDING_AFTER_MS): a quick preview arrives
    // as one amend, one commit, not two; the card is inert for its first second anyway (contract 5 (v2)).
    // Nothing is amended before the call's own commit held. A decision in between aborts the read (#seen),
    // and the broker refuses to amend a decided command.
    let started: Promise<ActionResult> | undefined;
    const slow =
      c.preview === undefined
        ? setTimeout(() => {
            started = committed.then((ok) =>
              ok
                ? this.#broker.amend(c.id, {
                    fields: { preview: { kind: spec.kind, status: 'pending' } },
                    action: 'preview_started',
                    detail: { preview: spec.kind },
                  })
                : { ok: false, code: 'NotFound', message: 'never committed' },
            );
          }, PENDING_AFTER_MS)
        : undefined;
    const slots = this.#slotsOf(upstream);
    let computed: Computed | undefined;
    try {
      computed = await slots.run(job.signal, () => this.#compute(c, upstream, tool, spec, job.signal));
    } finally {
      // Also when the read threw: no `pending` may be announced for a preview that will never come.
      clearTimeout(slow);
    }
    // Decided meanwhile, or its submit never committed: nothing is recorded.
    if (!(await committed)) return;
    if ((started !== undefined && !(await started).ok) || computed === undefined || job.signal.aborted)
      return;
    let preview: Preview = { ...computed, computed_at: iso(this.#clock.now()) };
    if (preview.status === 'ready' && !this.#budget.take(c.id, shownBytes(preview))) {
      const error = `previews of other calls waiting for you already hold ${PREVIEW_BUDGET_BYTES / 2 ** 20} MiB; decide some of them first`;
      preview = { kind: preview.kind, status: 'failed', error, computed_at: preview.computed_at! };
    }
    const r = await this.#broker.amend(c.id, {
      fields: { preview },
      action: 'preview_made',
      detail: previewRecord(preview),
    });
    // Decided meanwhile, or never committed: its text is held by nothing.
    if (!r.ok) this.#budget.release(c.id);
    if (r.ok)
      this.#log.log('info', 'preview', {
        id: c.id,
        upstream,
        tool,
        kind: preview.kind,
        status: preview.status,
      });
  }

  /** One computation through the upstream's preview connection (./through.ts); undefined once decided. */
  #compute(
    c: Command,
    upstream: string,
    tool: string,
    spec: RunSpec,
    signal: AbortSignal,
  ): Promise<Computed | undefined> {
    return previewThrough(this.#registry, { upstream, tool, spec, args: c.args, signal });
  }

  #specOf(upstream: string, tool: string): RunSpec | undefined {
    let specs = this.#specs.get(upstream);
    if (specs === undefined) {
      const config = this.#registry.config(upstream);
      if (config === undefined) return undefined;
      specs = previewSpecs(config);
      this.#specs.set(upstream, specs);
    }
    return specs.get(tool);
  }

  #slotsOf(upstream: string): Slots {
    let slots = this.#slots.get(upstream);
    if (slots === undefined) {
      slots = new Slots(PREVIEW_SLOTS);
      this.#slots.set(upstream, slots);
    }
    return slots;
  }
}
