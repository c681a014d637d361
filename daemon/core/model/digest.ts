/** The retention rule's digest (retention-rule.ts): a text's UTF-8 size and SHA-256, with Node's crypto. */
import { createHash } from 'node:crypto';
import type { Digest } from './lifecycle.js';

/** UTF-8 bytes and lower-case hex SHA-256 of `text`. */
export const sha256Digest: Digest = (text) => {
  const bytes = Buffer.from(text, 'utf8');
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
};
