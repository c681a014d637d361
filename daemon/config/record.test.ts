/** What `config_loaded` records and what counts as weaker (contract 14 (v4)): pure, no daemon. */
import { describe, expect, it } from 'vitest';
import { type ConfigRecord, readRecord, weakenings } from './record.js';

const rec = (r: Partial<ConfigRecord>): ConfigRecord => ({
  config_sha256: null,
  require_passkey: [],
  approvals: {},
  rules: [],
  ...r,
});

describe('[c14.config-loaded] what weakened since the last config_loaded', () => {
  it('a top-level require_passkey dropped, or narrowed to some commands', () => {
    expect(weakenings(rec({ require_passkey: ['*'] }), rec({ require_passkey: ['vault'] }))).toEqual([
      'require_passkey: true (every command) dropped',
    ]);
    expect(
      weakenings(rec({ require_passkey: ['notes__*', 'vault'] }), rec({ require_passkey: ['*'] })),
    ).toEqual([]);
    expect(weakenings(rec({ require_passkey: ['notes__*'] }), rec({}))).toEqual([
      'require_passkey dropped from notes__*',
    ]);
  });

  it('approvals lowered (not raised), a rule turned to allow, a deny rule gone or turned', () => {
    expect(weakenings(rec({ approvals: { a: 3 } }), rec({ approvals: { a: 2 } }))).toEqual([
      'approvals of a lowered from 3 to 2',
    ]);
    expect(weakenings(rec({ approvals: { a: 2 } }), rec({ approvals: { a: 3 } }))).toEqual([]);
    expect(
      weakenings(
        rec({
          rules: [
            { id: 'r', decision: 'ask' },
            { id: 'd', decision: 'deny' },
          ],
        }),
        rec({
          rules: [
            { id: 'r', decision: 'allow' },
            { id: 'd', decision: 'ask' },
          ],
        }),
      ),
    ).toEqual(['allow rule r added', 'deny rule d removed']);
    expect(
      weakenings(
        rec({ rules: [{ id: 'r', decision: 'allow' }] }),
        rec({ rules: [{ id: 'r', decision: 'allow' }] }),
      ),
    ).toEqual([]);
  });

  it('an entry it cannot read counts as absent, never as a reason to say nothing weakened', () => {
    const read = readRecord({
      require_passkey: ['vault', 7],
      approvals: { a: 2, b: 'x' },
      rules: [{ id: 1 }],
    });
    expect(read).toEqual(rec({ require_passkey: ['vault'], approvals: { a: 2 } }));
    expect(weakenings(read!, rec({}))).toEqual([
      'require_passkey dropped from vault',
      'approvals of a lowered from 2 to 1',
    ]);
  });
});
