/**
 * Field rules and error wording shared by the config sections (contract 1.3: every error names the field
 * and what it accepts, in one line).
 */
import { z } from 'zod';

/** An integer field from `min` to `max`, refused in one line that names the range and what came. */
export function intIn(min: number, max: number) {
  const accepts = {
    error: (issue: { input?: unknown }) =>
      `must be an integer from ${min} to ${max}, got ${describeValue(issue.input)}`,
  };
  return z.number(accepts).int(accepts).min(min, accepts).max(max, accepts);
}

/** What a refused value was, in words (`a string`, `null`, `7`). */
export function describeValue(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

export const HTTPS_ORIGIN = 'must be an https origin (scheme and host, no path), such as https://chatgpt.com';

export function isHttpsOrigin(u: string): boolean {
  try {
    const url = new URL(u);
    return (
      url.protocol === 'https:' && (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash
    );
  } catch {
    return false;
  }
}

/** An environment variable's name. */
export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    return acc === '' ? String(key) : `${acc}.${String(key)}`;
  }, '');
}

/** One line naming the first offending field and what it accepts. */
export function describeZodError(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0];
  if (!issue) return `${prefix}invalid`;
  if (issue.code === 'unrecognized_keys') {
    const where = formatPath(issue.path);
    const keys = issue.keys.map((k) => (where ? `${where}.${k}` : k)).join(', ');
    return `${prefix}${keys}: unknown key (not accepted here)`;
  }
  const field = formatPath(issue.path) || '(top level)';
  // zod 4 reports a bad record key as "Invalid key in record", with the key rule's own message inside.
  const inner = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
  return `${prefix}${field}: ${inner ?? issue.message}`;
}

/** The path of the first own `__proto__` key in parsed JSON, or undefined. Iterative: depth is the input's. */
export function protoKeyPath(raw: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[raw, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      const p = Array.isArray(v) ? `${path}[${k}]` : path === '' ? k : `${path}.${k}`;
      if (k === '__proto__' && !Array.isArray(v)) return p;
      stack.push([child, p]);
    }
  }
  return undefined;
}
