// Server-side request forgery: webhook targets are public https:// addresses. A URL is checked when it is registered
// (its form, then every address its host resolves to) and again at every delivery, where the connection uses only
// addresses that passed (the lookup below), so a name re-pointed at an internal address after registration reaches
// nothing. Redirects are never followed (src/webhooks/send.ts). IPv6 forms that stand for an IPv4 address are judged
// as that address. With `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK, off unless set), http:// and loopback addresses are
// allowed; private, link-local, metadata and multicast addresses never are. A refusal never says why (REFUSED_URL).
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
    ['64:ff9b:1::', 48, 'a local-use NAT64 address'],
    ['fc00::', 7, 'a private (unique local) address'],
    ['fe80::', 10, 'a link-local address'],
    ['fec0::', 10, 'a site-local address'],
    ['ff00::', 8, 'a multicast address'],
  ]),
);

/** The eight 16-bit groups of an IPv6 address (one `isIP` accepts), a trailing dotted quad included. */
function ipv6Groups(address: string): number[] {
  const parts = address.split(':');
  const quad = parts.at(-1)!.split('.').map(Number);
  if (quad.length === 4)
    parts.splice(-1, 1, ((quad[0]! << 8) | quad[1]!).toString(16), ((quad[2]! << 8) | quad[3]!).toString(16));
  const [head, tail] = parts.join(':').split('::');
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = part(head);
  const t = part(tail);
  return tail === undefined ? h : [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/**
 * The prefixes (first six groups) under which an IPv6 address stands for the IPv4 address in its last 32 bits: a
 * connection to it reaches that IPv4 address (through the host's own stack or a translator), so it is judged as that
 * address. Other forms that embed one are refused as a whole above: 6to4 (2002::/16), Teredo (2001::/32, inside
 * 2001::/23) and local-use NAT64 (64:ff9b:1::/48).
 */
const EMBEDDING = [
  [0, 0, 0, 0, 0, 0], //        ::/96, IPv4-compatible (deprecated); :: and ::1 are themselves
  [0, 0, 0, 0, 0, 0xffff], //   ::ffff:0:0/96, IPv4-mapped
  [0, 0, 0, 0, 0xffff, 0], //   ::ffff:0:0:0/96, IPv4-translated (SIIT)
  [0x64, 0xff9b, 0, 0, 0, 0], // 64:ff9b::/96, NAT64
];

/** The IPv4 address an IPv6 address stands for (the forms of EMBEDDING), if any. */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g.slice(0, 7).every((x) => x === 0) && g[7]! <= 1) return null; // :: and ::1
  if (!EMBEDDING.some((prefix) => prefix.every((x, i) => g[i] === x))) return null;
  return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
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
 * The one message for a refused destination, whatever the reason: it says neither what the host resolves to nor
 * whether it resolves, so that registering URLs tells a client nothing about the service's network.
 */
export const REFUSED_URL =
  'url: the host must resolve, and only to public addresses: webhooks are not sent to loopback, private, link-local, ' +
  'reserved or other internal addresses';
/** The same, as a delivery attempt's error. */
export const REFUSED_ATTEMPT = 'refused: the host does not resolve to public addresses only';

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
  const addresses = await resolveAll(u.hostname).catch(() => []);
  if (addresses.length === 0 || addresses.some(({ address }) => addressRefusal(address, policy))) {
    throw badRequest(REFUSED_URL);
  }
  return u.href;
}

export class RefusedTarget extends Error {}

/**
 * A `lookup` for http.request that resolves the name and refuses it when it does not resolve or any of its addresses
 * may not be a target: the check happens on the addresses the connection will use, at every delivery.
 */
export function safeLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const refuse = () => callback(new RefusedTarget(REFUSED_ATTEMPT), '', 0);
    resolveAll(hostname).then((addresses) => {
      if (addresses.length === 0 || addresses.some(({ address }) => addressRefusal(address, policy))) {
        refuse();
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
    }, refuse);
  };
}
