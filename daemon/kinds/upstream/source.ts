/**
 * The upstream source (contract 7): every connected upstream's tools, exposed as `<upstream>__<tool>` with
 * the upstream's own inputSchema, title and annotations, and each call validated against that JSON Schema
 * (the SDK's Ajv with RE2 patterns, ./schema.ts, in the product: a mismatch is `InvalidArguments:`
 * naming the field, nothing queued) after the depth and size bounds of ./bounds.ts,
 * into a SubmitRequest of tool `upstream`. The tools an upstream listed stay listed while it reconnects.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Logger } from '../../base/index.js';
import { describeConfinement, type UpstreamConfig } from '../../config/index.js';
import type { Command, Executor, SubmitRequest } from '../../core/index.js';
import type { ListingSchema, Prepared, Source, SourceListing } from '../../tool-kind/index.js';
import type { UpstreamRegistry, UpstreamStatus } from '../../upstreams/index.js';
import { MAX_TOOL_JSON_CHARS } from '../../upstreams/index.js';
import { argumentBoundsError } from './bounds.js';
import type { UpstreamRef } from './fields.js';
import { fileLane } from './previews/index.js';
import type { Validate } from './schema.js';
import { SchemaCompiler } from './schema-compiler.js';

/** Contract 7: an exposed name must match this, else the tool is not exposed (logged upstream_tool_skipped). */
const EXPOSED_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

const DESCRIPTION_PREFIX =
  "Each call needs the owner's approval and may answer PENDING (then call await_command_result with its pending_id).";
/**
 * Issue 19: a tool the read-only policy approves (contract 7 trust_read_only_hint) must not claim to wait for
 * the owner. It is still a command, recorded and shown; a slow call may still answer PENDING.
 */
const POLICY_PREFIX =
  "Calls are approved at once by the owner's read-only policy (the server marks this tool read-only) and recorded; a call still running after its wait answers PENDING (then call await_command_result with its pending_id).";

interface Exposed {
  tool: Tool;
  upstream: string;
  ref: UpstreamRef;
  validate: Validate;
  readOnly: boolean;
}

/** "data/path must be string" (ajv) → "path must be string"; the root is "arguments". */
function fieldMessage(ajvMessage: string): string {
  const first = ajvMessage.split(', data')[0] ?? ajvMessage;
  return first
    .replace(/^data\/(\S+)/, (_, p: string) => p.split('/').join('.'))
    .replace(/^data\b/, 'arguments');
}

function refuse(message: string): Prepared {
  return { kind: 'refuse', code: 'InvalidArguments', message };
}

export class UpstreamSource implements Source {
  readonly kind = 'upstream';
  readonly executor: Executor;
  readonly listingSchema: ListingSchema = {
    properties: {
      upstreams: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            connected: { type: 'boolean' },
            tools: {
              type: 'array',
              items: { type: 'string' },
              description: 'Exposed names (<upstream>__<tool>).',
            },
          },
          required: ['name', 'connected', 'tools'],
        },
      },
    },
    required: [],
  };
  readonly #registry: UpstreamRegistry;
  readonly #log: Logger;
  #exposed = new Map<string, Exposed>();
  readonly #listeners = new Set<() => void>();
  readonly #skipped = new Set<string>();
  readonly #compiler = new SchemaCompiler(() => this.#rebuild());
  /** What the exposed tools were built from (each listed Tool and its validator, in order). */
  #basis: Array<Tool | Validate> = [];
  readonly #sizes = new WeakMap<Tool, number>();

  /** `executor` forwards the approved calls (./executor.ts). */
  constructor(registry: UpstreamRegistry, log: Logger, executor: Executor) {
    this.#registry = registry;
    this.executor = executor;
    this.#log = log;
    registry.onChange(() => this.#rebuild());
    this.#rebuild();
  }

  /** The exposed tools, in config order then the upstream's order. */
  tools(): Tool[] {
    return [...this.#exposed.values()].map((e) => e.tool);
  }

  /**
   * For list_commands (contract 3.1 v2): each upstream, whether it is connected, and its exposed names —
   * present when the config names any upstream, so a daemon without them answers exactly as before.
   */
  listing(): SourceListing {
    const byUpstream = new Map<string, string[]>();
    for (const [name, e] of this.#exposed)
      byUpstream.set(e.upstream, [...(byUpstream.get(e.upstream) ?? []), name]);
    const upstreams = this.#registry.status().map((s: UpstreamStatus) => ({
      name: s.name,
      connected: s.state === 'connected',
      tools: byUpstream.get(s.name) ?? [],
    }));
    return { fields: upstreams.length > 0 ? { upstreams } : {} };
  }

  /**
   * Contract 7: the answer of the exposed tool itself (and of its task) when SUCCEEDED is the upstream's
   * result unchanged plus `_meta["ogf-broker/command"]`; anything else is the result of 3.2 (undefined).
   */
  answer(command: Command): CallToolResult | undefined {
    const p = command.phase;
    if (p.state !== 'succeeded' || p.outcome.upstream_result === undefined) return undefined;
    const result = p.outcome.upstream_result;
    const meta = (result._meta ?? {}) as Record<string, unknown>;
    return {
      ...(result as unknown as CallToolResult),
      _meta: {
        ...meta,
        'ogf-broker/command': { pending_id: command.id, status: 'SUCCEEDED', command: command.command },
      },
    };
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Validates a call against the upstream's inputSchema and builds its command (contract 7). */
  prepare(name: string, args: Record<string, unknown>, client: string): Prepared {
    const e = this.#exposed.get(name);
    // The edge dispatches only names this source listed, and both change in the same synchronous step.
    if (e === undefined) return refuse(`name must be a listed tool, got ${JSON.stringify(name)}`);
    // Issue 19: depth and size first — no schema check, no owner, no snapshot ever sees an unbounded value.
    const unbounded = argumentBoundsError(args);
    if (unbounded !== undefined) return refuse(unbounded);
    const checked = e.validate(args);
    if (!checked.valid) {
      return refuse(
        `${fieldMessage(checked.errorMessage ?? 'data is invalid')} (the inputSchema of ${name})`,
      );
    }
    const config = this.#registry.config(e.upstream) as UpstreamConfig;
    const request: SubmitRequest = {
      tool: 'upstream',
      command: name,
      args,
      display: [e.upstream, e.ref.tool],
      client,
      upstream: e.ref,
    };
    // Contract 21: a stdio server's reach, as the owner decides on it.
    if (config.argv !== undefined) request.reach = describeConfinement(config.sandbox || undefined);
    // Contract 7: trust_read_only_hint approves calls to tools the upstream annotates readOnlyHint: true.
    if (config.trust_read_only_hint && e.readOnly) request.approved_by = 'policy:read_only';
    // Contract 20: a call with a preview launches in its file's lane (previews/lane.ts).
    const lane = fileLane(e.upstream, config, e.ref.tool, args);
    if (lane !== undefined) request.file_lane = lane;
    return { kind: 'submit', request, waitSeconds: config.wait_seconds };
  }

  #rebuild(): void {
    const next = new Map<string, Exposed>();
    const basis: Array<Tool | Validate> = [];
    for (const upstream of this.#registry.names()) {
      const config = this.#registry.config(upstream)!;
      const only = config.tools === undefined ? undefined : new Set(config.tools);
      for (const t of this.#registry.tools(upstream) ?? []) {
        if (only !== undefined && !only.has(t.name)) continue;
        const exposedName = `${upstream}__${t.name}`;
        if (!EXPOSED_NAME_RE.test(exposedName)) {
          this.#skip(upstream, t.name, 'its exposed name would not match ^[A-Za-z0-9_-]{1,64}$');
          continue;
        }
        // At every listing, even when the inputSchema did not change: a re-listed tool keeping its schema
        // once took a 7.5 MB title into every View of its calls (issue 19 finding 4).
        if (this.#size(t) > MAX_TOOL_JSON_CHARS) {
          this.#skip(
            upstream,
            t.name,
            `its definition is larger than ${MAX_TOOL_JSON_CHARS} characters of JSON`,
          );
          continue;
        }
        // Bounded, linear-time validation, each tool's schema on its own (./schema.ts), compiled
        // in the background a slice at a time (./schema-compiler.ts): not exposed until its turn came.
        const compiled = this.#compiler.get(upstream, t.inputSchema);
        if (compiled === undefined) continue;
        if (!compiled.ok) {
          this.#skip(upstream, t.name, compiled.why);
          continue;
        }
        next.set(exposedName, this.#describe(upstream, exposedName, t, compiled.validate));
        basis.push(t, compiled.validate);
      }
    }
    this.#compiler.sweep();
    // Each compile slice rebuilds: compare the listed objects first, the JSON only after a re-listing.
    const same = basis.length === this.#basis.length && basis.every((x, i) => x === this.#basis[i]);
    const changed =
      !same && JSON.stringify([...next.values()].map((e) => e.tool)) !== JSON.stringify(this.tools());
    this.#exposed = next;
    this.#basis = basis;
    if (changed) for (const l of [...this.#listeners]) l();
  }

  /** A listed tool's size as JSON, once per listed object (every compile slice rebuilds). */
  #size(t: Tool): number {
    let n = this.#sizes.get(t);
    if (n === undefined) {
      n = JSON.stringify(t).length;
      this.#sizes.set(t, n);
    }
    return n;
  }

  /** Logs a tool that is not exposed, once per upstream, tool and reason (refreshes repeat the same list). */
  #skip(upstream: string, tool: string, why: string): void {
    const key = JSON.stringify([upstream, tool, why]);
    if (this.#skipped.has(key)) return;
    // Bounded: a server renaming its bad tools on every list_changed must not grow this for ever.
    if (this.#skipped.size >= 4096) this.#skipped.clear();
    this.#skipped.add(key);
    this.#log.log('warn', 'upstream_tool_skipped', {
      upstream,
      tool: tool.slice(0, 200),
      why: why.slice(0, 500),
    });
  }

  #describe(upstream: string, exposedName: string, t: Tool, validate: Validate): Exposed {
    const readOnly = t.annotations?.readOnlyHint === true;
    const config = this.#registry.config(upstream);
    // As prepare() and the broker decide: the policy approves only where one owner's approval would do,
    // and never a call that needs the owner's passkey (contract 13.3).
    const byPolicy =
      readOnly &&
      config?.trust_read_only_hint === true &&
      config.approvals === 1 &&
      config.require_passkey !== true;
    const prefix = byPolicy ? POLICY_PREFIX : DESCRIPTION_PREFIX;
    const tool: Tool = {
      name: exposedName,
      description: t.description ? `${prefix} ${t.description}` : prefix,
      inputSchema: t.inputSchema,
      // Contract 10: every upstream tool is gated, so it may run as a task. No outputSchema (contract 7).
      execution: { taskSupport: 'optional' },
    };
    if (t.title !== undefined) tool.title = t.title;
    if (t.annotations !== undefined) tool.annotations = t.annotations;
    const ref: UpstreamRef = { name: upstream, tool: t.name };
    if (t.title !== undefined) ref.title = t.title;
    if (t.annotations !== undefined) ref.annotations = t.annotations as Record<string, unknown>;
    return { tool, upstream, ref, validate, readOnly };
  }
}
