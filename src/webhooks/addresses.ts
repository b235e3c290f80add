import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Whether an IP address is on the public internet: not loopback, private, link-local (cloud metadata
 * services live there), carrier-grade NAT, multicast, reserved or unspecified. An IPv4-mapped IPv6
 * address is judged as the IPv4 address it carries.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  return ipaddr.process(ip).range() === 'unicast';
}

/** Why a URL's host may not receive webhooks when private addresses are refused, or undefined. */
export function privateHostProblem(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is this machine`;
  if (isIP(host) !== 0 && !isPublicAddress(host)) return `${host} is not a public address`;
  return undefined;
}

/**
 * A `lookup` for outgoing connections that refuses a host name resolving to a non-public address.
 * The connection goes to the address checked here, so a name cannot resolve to a public address
 * when checked and a private one when connected (DNS rebinding).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const error = Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, not a public address`), { code: 'EPRIVATEADDRESS' });
      return callback(error, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};
