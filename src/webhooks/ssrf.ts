// Server-side request forgery: webhook targets are public https:// addresses. A URL is checked when it is registered
// (its form, then every address its host resolves to) and again at every delivery, where the connection uses only
// addresses that passed (the lookup below), so a name re-pointed at an internal address after registration reaches
// nothing. Redirects are never followed (src/webhooks/send.ts). With `allowLoopback` (development), http:// and
// loopback addresses are allowed; private, link-local, metadata and multicast addresses never are.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { badRequest } from '../errors.ts';

export interface TargetPolicy {
  allowLoopback: boolean;
}

const MAX_URL = 2048;

function ranges(kind: 'ipv4' | 'ipv6', list: [string, number, string][]) {
  return list.map(([net, prefix, what]) => {
    const b = new BlockList();
    b.addSubnet(net, prefix, kind);
    return { b, kind, what };
  });
}

const LOOPBACK = ranges('ipv4', [['127.0.0.0', 8, 'a loopback address']]).concat(
  ranges('ipv6', [['::1', 128, 'a loopback address']]),
);
const REFUSED = ranges('ipv4', [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (carrier-grade NAT) address'],
  ['169.254.0.0', 16, 'a link-local address (cloud metadata services live there)'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a reserved address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
]).concat(
  ranges('ipv6', [
    ['::', 128, 'the unspecified address'],
    ['100::', 64, 'a discard address'],
    ['2001::', 23, 'a reserved address'],
    ['2001:db8::', 32, 'a documentation address'],
    ['2002::', 16, 'a 6to4 address'],
    ['fc00::', 7, 'a private (unique local) address'],
    ['fe80::', 10, 'a link-local address'],
    ['fec0::', 10, 'a site-local address'],
    ['ff00::', 8, 'a multicast address'],
  ]),
);

/** The IPv4 address an IPv6 address stands for (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | null {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return null;
  if (m[1]) return m[1];
  const hi = parseInt(m[2]!, 16);
  const lo = parseInt(m[3]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Why an address may not be a webhook target, or null when it may. */
export function addressRefusal(address: string, policy: TargetPolicy): string | null {
  let a = address.replace(/^\[|\]$/g, '').toLowerCase();
  let kind = isIP(a);
  if (kind === 0) return 'not an IP address';
  if (kind === 6) {
    const v4 = embeddedIpv4(a);
    if (v4) {
      a = v4;
      kind = 4;
    }
  }
  const family = kind === 4 ? 'ipv4' : 'ipv6';
  for (const r of LOOPBACK) {
    if (r.kind === family && r.b.check(a, family)) return policy.allowLoopback ? null : r.what;
  }
  for (const r of REFUSED) if (r.kind === family && r.b.check(a, family)) return r.what;
  return null;
}

/** All the addresses a host name resolves to (an IP literal: itself). */
function resolveAll(host: string): Promise<LookupAddress[]> {
  const literal = host.replace(/^\[|\]$/g, '');
  if (isIP(literal)) return Promise.resolve([{ address: literal, family: isIP(literal) }]);
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );
}

/**
 * The URL to store, or a 400 naming `url` and the rule broken: absolute https:// (http:// too with allowLoopback),
 * no user name or password, a host that resolves, and only to addresses that may be targets.
 */
export async function checkEndpointUrl(raw: string, policy: TargetPolicy): Promise<string> {
  if (raw.length > MAX_URL) throw badRequest(`url: must be at most ${MAX_URL} characters`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest('url: must be an absolute URL such as https://example.com/webhooks');
  }
  const schemes = policy.allowLoopback ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(u.protocol)) {
    throw badRequest(policy.allowLoopback ? 'url: must be an http:// or https:// URL' : 'url: must be an https:// URL');
  }
  if (u.username || u.password) throw badRequest('url: must not contain a user name or password');
  if (!u.hostname) throw badRequest('url: must name a host');
  u.hash = '';
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(u.hostname);
  } catch {
    throw badRequest(`url: the host ${u.hostname} does not resolve`);
  }
  if (addresses.length === 0) throw badRequest(`url: the host ${u.hostname} does not resolve`);
  for (const { address } of addresses) {
    const why = addressRefusal(address, policy);
    if (why) {
      const via = isIP(u.hostname.replace(/^\[|\]$/g, '')) ? address : `${u.hostname} resolves to ${address}, which`;
      throw badRequest(`url: ${via} is ${why}; webhooks are sent only to public addresses`);
    }
  }
  return u.href;
}

export class RefusedTarget extends Error {}

/**
 * A `lookup` for http.request that resolves the name and refuses it when any of its addresses may not be a target:
 * the check happens on the addresses the connection will use, at every delivery.
 */
export function safeLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname).then(
      (addresses) => {
        for (const { address } of addresses) {
          const why = addressRefusal(address, policy);
          if (why) {
            callback(new RefusedTarget(`refused: ${hostname} resolves to ${address}, ${why}`), '', 0);
            return;
          }
        }
        if (addresses.length === 0) {
          callback(new Error(`${hostname} does not resolve`), '', 0);
          return;
        }
        const wanted = typeof options === 'object' ? options.family : undefined;
        const pick = addresses.filter((a) => !wanted || a.family === wanted);
        if ((options as { all?: boolean }).all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, pick.length ? pick : addresses);
        } else {
          const first = pick[0] ?? addresses[0]!;
          callback(null, first.address, first.family);
        }
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}
