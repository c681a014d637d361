/**
 * Which IP addresses a Client ID Metadata Document may be fetched from (contract 15: "public addresses
 * only"). A client_id is a URL the AI chooses; fetching it from the owner's machine must not reach the
 * machine itself, the LAN, a cloud metadata service (169.254.169.254) or anything else not on the public
 * internet. The ranges are IANA's special-purpose registries (RFC 6890 and successors); an IPv4-mapped
 * IPv6 address is judged as its IPv4 address. node:net's BlockList does the matching (no library needed).
 */
import { BlockList, isIP } from 'node:net';

const SPECIAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  SPECIAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  SPECIAL.addSubnet(net, prefix, 'ipv6');
}

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True for a literal address on the public internet; false for any special-purpose one or a non-address. */
export function isPublicAddress(address: string): boolean {
  const mapped = MAPPED_V4.exec(address);
  if (mapped !== null) return isPublicAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 4) return !SPECIAL.check(address, 'ipv4');
  if (family === 6) {
    // Other IPv4-embedding forms (::a.b.c.d, ::ffff:0:a.b.c.d) BlockList would not see as mapped: nothing
    // public starts with `::` (that space is all special-purpose), so refuse them outright.
    if (address.startsWith('::') || address.includes('.')) return false;
    return !SPECIAL.check(address, 'ipv6');
  }
  return false;
}

/** True for the loopback addresses `allow_loopback_metadata` admits. */
export function isLoopbackAddress(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}
