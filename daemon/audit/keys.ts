/**
 * The audit key (contract 14): an Ed25519 key pair made with node:crypto at the first start,
 * `<data-dir>/audit.key` (PKCS#8 PEM, 0600) and `<data-dir>/audit.pub` (SPKI PEM; what `ogf-broker audit key`
 * prints and `audit verify --pub` reads). The private key never leaves the data dir; checkpoints signed with
 * it are what should (docs/audit.md).
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hash,
  type KeyObject,
  sign,
} from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../base/index.js';
import type { AuditSigner } from '../core/index.js';

export interface AuditKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** audit.pub's text. */
  publicPem: string;
}

/** Where a data dir keeps the audit key pair. */
export function auditKeyPaths(dataDir: string): { key: string; pub: string } {
  return { key: join(dataDir, 'audit.key'), pub: join(dataDir, 'audit.pub') };
}

/** The data dir's audit key pair, created (0600, never overwritten) when absent; audit.pub rewritten from it when lost. */
export function loadOrCreateAuditKey(dataDir: string): AuditKey {
  const paths = auditKeyPaths(dataDir);
  if (!existsSync(paths.key)) {
    const pair = generateKeyPairSync('ed25519');
    const pem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    try {
      // `wx`: two processes starting at once keep the first one's key.
      writeFileSync(paths.key, pem, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(paths.key, 'utf8'));
  } catch (e) {
    throw new UsageError(
      `${paths.key} is no readable private key (${(e as Error).message}): restore it from a backup`,
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new UsageError(
      `${paths.key} must hold an Ed25519 private key, got ${privateKey.asymmetricKeyType}`,
    );
  }
  const publicKey = createPublicKey(privateKey);
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
  if (!existsSync(paths.pub) || readFileSync(paths.pub, 'utf8') !== publicPem) {
    writeFileSync(paths.pub, publicPem, { mode: 0o600 });
  }
  return { privateKey, publicKey, publicPem };
}

/** A public key from a PEM file (`--pub`, `--key`, audit.pub); a clear error naming the file otherwise. */
export function readPublicKey(file: string, flag = '--pub'): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(
      `${flag}: ${file} must be an Ed25519 public key in PEM (ogf-broker audit key prints one): ${(e as Error).message}`,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new UsageError(`${flag}: ${file} must be an Ed25519 public key, got ${key.asymmetricKeyType}`);
  }
  return key;
}

/** The base64 SPKI DER form of a public key (what an export's checkpoint lines carry). */
export function publicKeyDer(key: KeyObject): string {
  return (key.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64');
}

/**
 * The text a node publishes its audit public key as (contract 16: `nodes.audit_public_key`): the SPKI PEM
 * that audit.pub holds and `ogf-broker audit key` prints, so a copy of either pins it (`audit verify --key`).
 */
export function auditPublicKeyText(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'pem' }) as string;
}

/** An Ed25519 public key from `auditPublicKeyText`'s PEM (or base64 SPKI DER); undefined when it is not one. */
export function parseAuditPublicKey(text: string): KeyObject | undefined {
  try {
    const trimmed = text.trim();
    const key = trimmed.startsWith('-----BEGIN')
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** `SHA256:` and the unpadded base64 of the SHA-256 of the key's SPKI DER (as `ssh-keygen -l` writes one). */
export function keyFingerprint(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' }) as Buffer;
  return `SHA256:${hash('sha256', der, 'base64').replace(/=+$/, '')}`;
}

/** Signs checkpoints with the private key (Ed25519 takes no digest name: `null`). */
export function signerOf(key: AuditKey): AuditSigner {
  return { sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), key.privateKey).toString('base64') };
}
