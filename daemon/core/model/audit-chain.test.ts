/**
 * The chain's canonical JSON (contract 14) over what an AI sent. RFC 8785 refuses strings that are not
 * well-formed Unicode, and the `canonicalize` package throws on a lone surrogate: before this was handled,
 * one request whose arguments held `"\ud800"` failed its submit's transaction with -32603 — and with it every
 * other change the group commit had put in the same batch.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, chainEntry, GENESIS_HASH, sealEntry } from './audit-chain.js';

describe('[c14.chain] canonical JSON of anything JSON can carry', () => {
  it('[attack] a lone surrogate, in a value or a key, is hashed as U+FFFD instead of throwing', () => {
    const hostile = { text: 'a\ud800b', '\udfffkey': ['\ud83d'], fine: '😀' };
    expect(canonicalJson(hostile)).toBe('{"fine":"😀","text":"a\ufffdb","\ufffdkey":["\ufffd"]}');
    const e = chainEntry(
      {
        at: '2026-12-02T08:00:00.000Z',
        actor: { kind: 'client', name: 'local' },
        action: 'submit',
        detail: hostile,
      },
      1,
      GENESIS_HASH,
    );
    expect(sealEntry(e).hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('well-formed text is untouched: the same canonical form as RFC 8785', () => {
    expect(canonicalJson({ b: 'x\u2028y', a: [1, 'é'] })).toBe('{"a":[1,"é"],"b":"x\u2028y"}');
  });
});
