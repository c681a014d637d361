/**
 * A software WebAuthn authenticator for unit tests and attacks (never product code): a P-256 key whose
 * COSE public key is encoded with @simplewebauthn/server's own CBOR helper, and assertions built as an
 * authenticator builds them (authenticatorData = SHA-256(rp id) | flags | counter; signature = ES256 over
 * authenticatorData | SHA-256(clientDataJSON)). It is what a process that holds no passkey of the owner's
 * could make: a valid signature by a key the daemon does not know.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

/** The shape of an AuthenticationResponseJSON. */
export interface SoftAssertion {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string };
  clientExtensionResults: Record<string, unknown>;
}

export class SoftAuthenticator {
  readonly id = randomBytes(16).toString('base64url');
  readonly publicKey: string;
  readonly #key: KeyObject;
  #counter = 0;

  constructor(
    readonly rpId = 'localhost',
    readonly origin = 'http://localhost:7719',
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]);
    this.publicKey = Buffer.from(isoCBOR.encode(cose)).toString('base64url');
  }

  /**
   * A RegistrationResponseJSON over `challenge` with `none` attestation, as an authenticator answers
   * `passkey_begin`'s options: authenticatorData = SHA-256(rp id) | flags (UP, UV, AT) | counter |
   * attested credential data (AAGUID of zeros, the credential id, the COSE public key).
   */
  register(challenge: string): Record<string, unknown> {
    const idBytes = Buffer.from(this.id, 'base64url');
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(idBytes.length);
    const authData = Buffer.concat([
      sha256(this.rpId),
      Buffer.from([0x01 | 0x04 | 0x40]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLength,
      idBytes,
      Buffer.from(this.publicKey, 'base64url'),
    ]);
    const attestationObject = Buffer.from(
      isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', new Uint8Array(authData)],
        ]) as never,
      ),
    );
    const clientData = Buffer.from(
      JSON.stringify({ type: 'webauthn.create', challenge, origin: this.origin, crossOrigin: false }),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    };
  }

  /** An AuthenticationResponseJSON over `challenge` (user verified unless `uv` is false). */
  assert(challenge: string, opts: { uv?: boolean; origin?: string } = {}): SoftAssertion {
    this.#counter++;
    const flags = 0x01 | (opts.uv === false ? 0 : 0x04);
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.#counter);
    const authData = Buffer.concat([sha256(this.rpId), Buffer.from([flags]), counter]);
    const clientData = Buffer.from(
      JSON.stringify({
        type: 'webauthn.get',
        challenge,
        origin: opts.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.#key);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
      },
      clientExtensionResults: {},
    };
  }
}
