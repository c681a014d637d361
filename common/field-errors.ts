/**
 * The wording of a field's error, shared by every edge that validates (the daemon's MCP input and owner
 * frames, the bridge client's session file and frames): `<field> must be <accepts>, got <what came>`, so
 * the AI and the owner read one style whichever edge refused them. No zod here (common/ imports nothing):
 * `mustBe` returns the error option zod's checks take, as a plain object.
 */

/** Describes a received value for an error message: `a string`, `true`, `null`, `an array`, `missing`. */
export function describeInput(value: unknown): string {
  if (value === undefined) return 'nothing (it is required)';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'a non-finite number';
  if (typeof value === 'string') return 'a string';
  if (Array.isArray(value)) return 'an array';
  return `an ${typeof value}`;
}

/** A zod error option that says `<field> must be <accepts>, got <what came>`. */
export function mustBe(field: string, accepts: string): { error: (issue: { input?: unknown }) => string } {
  return {
    error: (issue: { input?: unknown }) => `${field} must be ${accepts}, got ${describeInput(issue.input)}`,
  };
}
