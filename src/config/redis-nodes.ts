/** Where a Redis Cluster is: the seed nodes of `REDIS_CLUSTER_NODES`, read and checked. */

/** The seed nodes of a cluster, and the user, password and TLS every node is spoken to with. */
export interface ClusterSeeds {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/**
 * Reads `REDIS_CLUSTER_NODES`: entries `host:port` or `redis://[user:password@]host:port`
 * (`rediss://` for TLS), separated by commas. Credentials and TLS, when given, are those of the
 * whole cluster: they may be written on one entry. Throws an error naming the bad entry (never
 * its password).
 */
export function parseClusterNodes(text: string): ClusterSeeds {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new Error('REDIS_CLUSTER_NODES must list at least one host:port');
  const seeds: ClusterSeeds = { nodes: [], tls: false };
  const schemes = new Set<string>();
  entries.forEach((entry, i) => {
    const explicit = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry);
    const withScheme = explicit ? entry : `redis://${entry}`;
    let u: URL;
    try {
      u = new URL(withScheme);
    } catch {
      const raw = entry.includes('@') ? '' : ` (${entry})`;
      throw new Error(`REDIS_CLUSTER_NODES entry ${i + 1}${raw} is not host:port or a redis:// URL`);
    }
    if (u.password) u.password = '***';
    const shown = explicit ? u.toString().replace(/\/$/, '') : entry;
    if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
      throw new Error(`REDIS_CLUSTER_NODES entry ${i + 1} (${shown}) must start with redis:// or rediss://`);
    if (u.pathname !== '' && u.pathname !== '/')
      throw new Error(
        `REDIS_CLUSTER_NODES entry ${i + 1} (${shown}) names a database: a Redis Cluster has only database 0`,
      );
    const port = u.port === '' ? 6379 : Number(u.port);
    if (!u.hostname || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`REDIS_CLUSTER_NODES entry ${i + 1} (${shown}) is not host:port`);
    // An entry without a scheme speaks as the others do.
    if (explicit) schemes.add(u.protocol);
    // The URL parser keeps an IPv6 host in brackets; the socket wants it bare.
    seeds.nodes.push({ host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port });
    const parsed = new URL(withScheme);
    if (parsed.username) seeds.username = decodeURIComponent(parsed.username);
    if (parsed.password) seeds.password = decodeURIComponent(parsed.password);
  });
  if (schemes.size > 1)
    throw new Error(
      'REDIS_CLUSTER_NODES mixes redis:// and rediss://: a cluster speaks TLS on every node or on none',
    );
  seeds.tls = schemes.has('rediss:');
  return seeds;
}
