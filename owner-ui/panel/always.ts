/**
 * "Always" in the Allow… dialog (contract 18): the owner's `allow` rule that says what the dialog's scope
 * says — this command from this client, with these exact arguments, any arguments, or a path under a folder
 * — as a CEL expression (contract 11). Exact arguments are each compared by key, with their count, so an
 * extra argument is not covered; arguments holding lists or objects, or shown only in part, make no rule
 * (a grant can still hold them). Pure: unit-tested beside it.
 */

/** A CEL string literal: JSON's escapes are CEL's. */
function lit(s: string): string {
  return JSON.stringify(s);
}

/** A JSON value CEL compares as written (a string, a number, true/false, null); undefined for the others. */
function scalar(v: unknown): string | undefined {
  if (typeof v === 'string') return lit(v);
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean' || v === null) return String(v);
  return undefined;
}

export type AlwaysScope =
  | { kind: 'exact'; args: Record<string, unknown>; shortened: boolean }
  | { kind: 'any' }
  | { kind: 'when'; when: string };

/** The rule's expression for this command, client and scope; a string saying why not when there is none. */
export function alwaysExpression(
  command: string,
  client: string,
  scope: AlwaysScope,
): { when: string } | { why: string } {
  const base = `command == ${lit(command)} && client == ${lit(client)}`;
  if (scope.kind === 'any') return { when: base };
  if (scope.kind === 'when') return { when: `${base} && ${scope.when}` };
  if (scope.shortened) {
    return {
      why: 'These arguments are shown shortened, so no rule can name them exactly: choose any arguments or a folder.',
    };
  }
  const parts = [base, `size(args) == ${Object.keys(scope.args).length}`];
  for (const [k, v] of Object.entries(scope.args)) {
    const value = scalar(v);
    if (value === undefined) {
      return {
        why: `Argument ${k} holds a list or an object, which a rule cannot name exactly: choose any arguments, a folder, or a grant for a while.`,
      };
    }
    parts.push(`args[${lit(k)}] == ${value}`);
  }
  return { when: parts.join(' && ') };
}
