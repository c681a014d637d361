/**
 * Fetches a Client ID Metadata Document (contract 15) without letting the AI that chose the URL steer the
 * daemon anywhere it should not go (SSRF):
 *
 * - https only (or, with `allow_loopback_metadata`, http/https to `127.0.0.1` / `localhost` exactly);
 * - the host name is resolved here, and EVERY address it resolves to must be public (address.ts) — one
 *   private answer among public ones refuses the whole name, so a resolver that rotates answers cannot
 *   slip one through;
 * - the connection goes to the address that was checked (a `lookup` that returns it), never to a second
 *   resolution (DNS rebinding between check and connect); TLS still verifies the certificate for the name;
 * - no redirects (a 3xx is a refusal, whatever its Location);
 * - at most 5 s for the whole exchange and 64 KiB of body, counted as it arrives.
 *
 * Node's `fetch` cannot pin the connect address, hence node:http(s) with a custom `lookup`.
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from './address.js';

export const FETCH_TIMEOUT_MS = 5000;
export const FETCH_MAX_BYTES = 64 * 1024;

/** Resolves a host name to every address (injected in unit tests to play a hostile resolver). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface FetchOptions {
  allowLoopback: boolean;
  resolve?: Resolve;
  timeoutMs?: number;
  maxBytes?: number;
}

/** A refusal to fetch, in one sentence naming why (shown to the client as `invalid_client`). */
export class MetadataFetchError extends Error {}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost']);

/** The address to connect to, once every address the host resolves to has passed. */
async function checkedAddress(url: URL, opts: FetchOptions): Promise<LookupAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopbackDev = opts.allowLoopback && LOOPBACK_NAMES.has(host);
  if (url.protocol !== 'https:' && !(loopbackDev && url.protocol === 'http:')) {
    throw new MetadataFetchError('client_id must be an https URL');
  }
  let addresses: LookupAddress[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (opts.resolve ?? systemResolve)(host);
    } catch {
      throw new MetadataFetchError(`client_id host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new MetadataFetchError(`client_id host ${host} does not resolve`);
  for (const a of addresses) {
    const ok = loopbackDev ? isLoopbackAddress(a.address) : isPublicAddress(a.address);
    if (!ok) {
      throw new MetadataFetchError(
        `client_id host ${host} resolves to ${a.address}, which is not a public address`,
      );
    }
  }
  return addresses[0]!;
}

/**
 * GETs `url` under the rules above; resolves the parsed JSON body. Throws MetadataFetchError on any
 * refusal, timeout, oversize body, non-200 answer or body that is not JSON.
 */
export async function fetchClientDocument(url: URL, opts: FetchOptions): Promise<unknown> {
  const target = await checkedAddress(url, opts);
  const timeoutMs = opts.timeoutMs ?? FETCH_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? FETCH_MAX_BYTES;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<unknown>((resolve, reject) => {
    const fail = (why: string) => {
      req.destroy();
      reject(new MetadataFetchError(why));
    };
    const timer = setTimeout(
      () => fail(`client_id document did not arrive within ${timeoutMs / 1000} s`),
      timeoutMs,
    );
    const req = request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      // The checked address, and only it: no second resolution between the check and the connection.
      lookup: (_host, options, cb) => {
        if ((options as { all?: boolean }).all) cb(null, [target] as never, target.family);
        else cb(null, target.address, target.family);
      },
      agent: false,
    });
    req.once('error', (e) => {
      clearTimeout(timer);
      reject(
        e instanceof MetadataFetchError ? e : new MetadataFetchError(`client_id document: ${e.message}`),
      );
    });
    req.once('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        clearTimeout(timer);
        const redirect = res.statusCode !== undefined && res.statusCode >= 300 && res.statusCode < 400;
        fail(
          redirect
            ? 'client_id document answered with a redirect, which is not followed'
            : `client_id document answered HTTP ${res.statusCode}`,
        );
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        clearTimeout(timer);
        fail(`client_id document is larger than ${maxBytes} bytes`);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          clearTimeout(timer);
          fail(`client_id document is larger than ${maxBytes} bytes`);
          return;
        }
        chunks.push(c);
      });
      res.once('end', () => {
        clearTimeout(timer);
        if (size > maxBytes) return;
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new MetadataFetchError('client_id document is not JSON'));
        }
      });
      res.once('error', () => {});
    });
    req.end();
  });
}
