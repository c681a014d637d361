/**
 * A Web Push service played over loopback (contract 13.2), with the real protocol: an HTTP server that takes
 * the daemon's push requests, checks the VAPID JWT's ES256 signature against the key in the Authorization
 * header (RFC 8292), and — playing the browser too — decrypts the aes128gcm payload (RFC 8188) with the
 * subscription's private key and auth secret as RFC 8291 derives them (node:crypto ECDH and HKDF, written
 * here from the RFCs, not with the library the daemon uses). No real push service (FCM, Mozilla's) can be
 * reached from the tests.
 */
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One browser's subscription: its keys, and what the daemon is told (PushSubscription.toJSON()). */
export class Device {
  readonly #ecdh = createECDH('prime256v1');
  readonly auth = randomBytes(16);
  readonly publicKey: Buffer;
  endpoint = '';

  constructor() {
    this.publicKey = this.#ecdh.generateKeys();
  }

  json(): { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } } {
    return {
      endpoint: this.endpoint,
      expirationTime: null,
      keys: { p256dh: this.publicKey.toString('base64url'), auth: this.auth.toString('base64url') },
    };
  }

  /** RFC 8291 §3.4 and RFC 8188 §2: the plaintext of one aes128gcm body sent to this device. */
  decrypt(body: Buffer): string {
    const salt = body.subarray(0, 16);
    const rs = body.readUInt32BE(16);
    const idlen = body[20]!;
    const senderKey = body.subarray(21, 21 + idlen);
    const cipher = body.subarray(21 + idlen);
    if (cipher.length > rs) throw new Error('more than one record');
    const ecdhSecret = this.#ecdh.computeSecret(senderKey);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), this.publicKey, senderKey]);
    const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, this.auth, keyInfo, 32));
    const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
    const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
    const d = createDecipheriv('aes-128-gcm', cek, nonce);
    d.setAuthTag(cipher.subarray(cipher.length - 16));
    const padded = Buffer.concat([d.update(cipher.subarray(0, cipher.length - 16)), d.final()]);
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end--;
    if (padded[end] !== 2) throw new Error('no last-record delimiter');
    return padded.subarray(0, end).toString('utf8');
  }
}

export interface Pushed {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The VAPID JWT's claims, after its signature was verified. */
  claims: Record<string, unknown>;
  /** The `k` the Authorization header named (the daemon's VAPID public key). */
  vapidKey: string;
}

/** Verifies `vapid t=<jwt>, k=<key>` (RFC 8292 §3): ES256 over header.payload with key k. */
export function verifyVapid(authorization: string): { claims: Record<string, unknown>; key: string } {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization);
  if (m === null) throw new Error(`not a vapid Authorization header: ${authorization.slice(0, 20)}`);
  const [h, p, s] = m[1]!.split('.');
  const raw = Buffer.from(m[2]!, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (header.alg !== 'ES256') throw new Error(`alg ${String(header.alg)}`);
  const ok = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s!, 'base64url'),
  );
  if (!ok) throw new Error('the VAPID signature does not verify');
  return {
    claims: JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>,
    key: m[2]!,
  };
}

export class PushService {
  readonly pushed: Pushed[] = [];
  readonly refused: string[] = [];
  /** Paths answered with this status instead of 201 (404/410: the subscription is gone). */
  readonly answers = new Map<string, number>();
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<PushService> {
    const server = createServer();
    const svc = new PushService(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        try {
          const { claims, key } = verifyVapid(String(req.headers.authorization ?? ''));
          svc.pushed.push({ path, headers: req.headers, body: Buffer.concat(chunks), claims, vapidKey: key });
        } catch (e) {
          svc.refused.push((e as Error).message);
          res.writeHead(401).end();
          return;
        }
        res.writeHead(svc.answers.get(path) ?? 201).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return svc;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
