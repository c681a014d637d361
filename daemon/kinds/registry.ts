/**
 * The kinds as the core asks them (core/model/kind-policy.ts), built from the list kinds/index.ts registers.
 *
 * A request's kind-specific fields are stored, compared and shown whatever its kind, as before the kinds
 * had folders: the edges only ever set a kind's own, and the per-session lane (rule 6) follows a session
 * key on any command (the broker's unit tests drive it with catalog commands).
 */
import type { Command, KindFields, KindPolicies, KindView, Tool } from '../core/index.js';
import type { Kind } from '../tool-kind/index.js';

/** The registry: every kind by tool, and the KindPolicies the broker and the owner's Views ask. */
export interface KindRegistry extends KindPolicies {
  of(tool: Tool): Kind;
  /** The kind of a tool name read from outside (a View the CLI received), or undefined. */
  find(tool: string): Kind | undefined;
  readonly all: readonly Kind[];
}

function union<T>(lists: ReadonlyArray<readonly T[]>): T[] {
  return [...new Set(lists.flat())];
}

function pick(from: KindFields, names: readonly (keyof KindFields)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) if (from[name] !== undefined) out[name] = from[name];
  return out;
}

/** Builds the registry; a tool registered twice is a programming error. */
export function kindRegistry(kinds: readonly Kind[]): KindRegistry {
  const byTool = new Map<string, Kind>();
  for (const k of kinds) {
    if (byTool.has(k.tool)) throw new Error(`kind ${k.tool} is registered twice`);
    byTool.set(k.tool, k);
  }
  const fields = union(kinds.map((k) => k.fields));
  const identity = union(kinds.map((k) => k.identity));
  const shown = union(kinds.map((k) => k.shown));
  const lanes = union(kinds.map((k) => (k.lane === undefined ? [] : [k.lane])));
  return {
    all: kinds,
    of(tool) {
      const k = byTool.get(tool);
      if (k === undefined) throw new Error(`no kind registered for tool ${tool} (kinds/index.ts)`);
      return k;
    },
    find: (tool) => byTool.get(tool),
    refusal(command) {
      for (const k of kinds)
        if (k.commandName === command && k.grantRefusal !== undefined) return k.grantRefusal;
      return undefined;
    },
    fields: (request) => pick(request, fields) as KindFields,
    sameFields: (command, request) =>
      identity.every((name) => (command[name] ?? null) === (request[name] ?? null)),
    laneKey(command: Command) {
      for (const name of lanes) {
        const key = command[name];
        if (typeof key === 'string') return key;
      }
      return undefined;
    },
    view: (command) => pick(command, shown) as KindView,
    target(subject) {
      const k = byTool.get(subject.tool);
      return k?.target?.(subject);
    },
  };
}
