/**
 * Where a webhook may go. Loopback, private, link-local, shared (CGNAT), multicast and
 * unspecified addresses are refused unless the subscription allows private targets: an event
 * feed must not become a way to reach the machine's own network. The check runs on every address
 * a name resolves to, when the subscription is added and again at each connection (the lookup
 * the HTTP request uses), so a name that later resolves elsewhere is caught too.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b:1::', 48],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/** Whether `address` (IPv4 or IPv6) is not a public internet address. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped) return PRIVATE.check(mapped, 'ipv4');
    return PRIVATE.check(address, 'ipv6');
  }
  return true;
}

export class WebhookUrlError extends Error {
  override readonly name = 'WebhookUrlError';
}

/** A webhook URL checked for its form: http or https, a host, no credentials, no fragment. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new WebhookUrlError(`"${raw}" is not a URL (expected https://host/path)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new WebhookUrlError(`${url.protocol} URLs cannot receive webhooks: use https:// (or http://)`);
  if (url.username || url.password)
    throw new WebhookUrlError(
      'a webhook URL may not hold a user or password: receivers verify the signature instead',
    );
  if (url.hash) throw new WebhookUrlError('a webhook URL may not hold a #fragment');
  if (!url.hostname) throw new WebhookUrlError(`"${raw}" has no host`);
  return url;
}

/** The host of `url` without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Resolves `host` and refuses it when any address is private and `allowPrivate` is false. */
export async function checkTarget(url: URL, allowPrivate: boolean): Promise<string[]> {
  const host = hostOf(url);
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve, reject) =>
        dnsLookup(host, { all: true }, (err, all: LookupAddress[]) =>
          err
            ? reject(new WebhookUrlError(`${host} does not resolve (${err.code ?? err.message})`))
            : resolve(all.map((a) => a.address)),
        ),
      );
  const blocked = addresses.filter(isPrivateAddress);
  if (!allowPrivate && blocked.length > 0)
    throw new WebhookUrlError(
      `${host} is a private address (${blocked.join(', ')}): loopback, private and link-local targets are refused unless the subscription allows them (--allow-private)`,
    );
  return addresses;
}

/** A `lookup` for http.request that refuses private addresses unless allowed. */
export function guardedLookup(allowPrivate: boolean) {
  return (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, all: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const blocked = all.find((a) => isPrivateAddress(a.address));
      if (!allowPrivate && blocked) {
        const e: NodeJS.ErrnoException = new WebhookUrlError(
          `${hostname} resolves to a private address (${blocked.address}); not allowed for this subscription`,
        );
        e.code = 'EPRIVATE';
        return callback(e, '', 0);
      }
      if ((options as { all?: boolean }).all) return callback(null, all);
      const first = all[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
