/**
 * Architecture rule 3: one error catalog. The codes in daemon/base/errors.ts, in docs/lifecycle.md and in the
 * contract agree — no code lives in one place only.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDSHAKE_ERROR_CODES, NACK_CODES } from '../common/ogf-bridge.js';
import {
  BROKER_ERROR_CODES,
  DENY_REASONS,
  FAIL_REASONS,
  OWNER_ERROR_CODES,
  REJECTION_CODES,
  TOOL_ERROR_CODES,
  UNKNOWN_REASONS,
} from '../daemon/base/errors.js';
import { ROOT } from './helpers/daemon.js';

const CATALOG = {
  DENIED: DENY_REASONS,
  ERROR: FAIL_REASONS,
  UNKNOWN: UNKNOWN_REASONS,
  tool: TOOL_ERROR_CODES,
  owner: OWNER_ERROR_CODES,
};
const ALL = new Set<string>(Object.values(CATALOG).flat());

/** Codes in the first column of the tables under a markdown heading containing `heading`. */
function documented(doc: string, heading: string): string[] {
  const start = doc.indexOf(heading);
  const rest = doc.slice(start + heading.length);
  const end = rest.search(/\n#{2,3} /);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^\|\s*`([A-Za-z]+)`\s*\|/gm)].map((m) => m[1]!);
}

describe('the error catalog', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'lifecycle.md'), 'utf8');

  it('docs/lifecycle.md lists exactly the catalog, section by section', () => {
    expect(documented(doc, '### DENIED')).toEqual([...DENY_REASONS]);
    expect(documented(doc, '### ERROR')).toEqual([...FAIL_REASONS]);
    expect(documented(doc, '### UNKNOWN')).toEqual([...UNKNOWN_REASONS]);
    expect(documented(doc, '## Tool errors')).toEqual([...TOOL_ERROR_CODES]);
    expect(documented(doc, '## Owner WebSocket replies')).toEqual([...OWNER_ERROR_CODES]);
  });

  const contractPath = join(ROOT, '..', 'shared', 'design', 'contracts.md');
  it.runIf(existsSync(contractPath))('agrees with the contract, both ways', () => {
    const contract = readFileSync(contractPath, 'utf8');
    const table = (status: string) => {
      const row = contract
        .split('\n')
        .find((l) =>
          l.startsWith(`| \`${status === 'DENIED' ? 'denied' : status === 'ERROR' ? 'failed' : 'unknown'}\``),
        );
      return [...(row ?? '').matchAll(/`([A-Z][A-Za-z]+)`/g)].map((m) => m[1]!).filter((c) => c !== status);
    };
    expect(table('DENIED')).toEqual([...DENY_REASONS]);
    expect(table('ERROR')).toEqual([...FAIL_REASONS]);
    expect(table('UNKNOWN')).toEqual([...UNKNOWN_REASONS]);
    // A code in backticks alone, or opening a quoted message (contract 20: `NotRevertible: the file …`).
    for (const code of [...TOOL_ERROR_CODES, ...OWNER_ERROR_CODES])
      expect(contract).toMatch(new RegExp(`\`${code}[\`:]`));
    // Every capitalised code the contract names in backticks is one we know (or a status / protocol word).
    const words = new Set([...contract.matchAll(/`([A-Z][a-z]+[A-Z][A-Za-z]+)`/g)].map((m) => m[1]!));
    // Section 17 names two keys of the systemd unit `service install` writes: words, not codes.
    const UNIT_KEYS = new Set(['ExecStart', 'ExecReload']);
    const unknownToUs = [...words].filter(
      (w) => !ALL.has(w) && !(HANDSHAKE_ERROR_CODES as readonly string[]).includes(w) && !UNIT_KEYS.has(w),
    );
    expect(unknownToUs).toEqual([]);
  });

  it('the broker’s own codes are owner or tool codes, and the lifecycle’s shown ones are owner codes', () => {
    const shown = new Set<string>([...OWNER_ERROR_CODES, ...TOOL_ERROR_CODES]);
    expect(BROKER_ERROR_CODES.filter((c) => !shown.has(c))).toEqual([]);
    const owner = new Set<string>(OWNER_ERROR_CODES);
    expect(REJECTION_CODES.filter((c) => owner.has(c))).toEqual([
      'AlreadyDecided',
      'AlreadyApproved',
      'NotReconcilable',
    ]);
  });

  it('every code literal in the product source is in the catalog or is a protocol/internal word', () => {
    // Besides the reasons and error codes: the ogf-bridge/1 handshake and nack codes (contract 6) and the
    // pure lifecycle's rejection codes, each from its own catalog (no hand-kept list here).
    const OTHER = new Set<string>([...HANDSHAKE_ERROR_CODES, ...NACK_CODES, ...REJECTION_CODES]);
    const files = [
      ...readdirSync(join(ROOT, 'daemon'), { recursive: true }).map((f) => join('daemon', String(f))),
      ...readdirSync(join(ROOT, 'bridge-client'), { recursive: true }).map((f) =>
        join('bridge-client', String(f)),
      ),
    ].filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    const seen = new Set<string>();
    for (const f of files) {
      for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(/\b(?:code|reason): '([A-Z][A-Za-z]+)'/g))
        seen.add(m[1]!);
    }
    expect(seen.size).toBeGreaterThan(10);
    // The bridge client's success line is the one code literal that names no failure.
    expect(readFileSync(join(ROOT, 'bridge-client', 'deliver.ts'), 'utf8')).toContain('code: DELIVERED_CODE');
    expect([...seen].filter((c) => !ALL.has(c) && !OTHER.has(c))).toEqual([]);
  });
});
