/**
 * Options for the `etcd3` client (its `IOptions`: `hosts`, `credentials`, `auth`, `grpcOptions`, ...), passed
 * to `new Etcd3()` as they are. Typed loosely on purpose: `etcd3` is an optional peer dependency, and the
 * library's public types must compile in applications that never installed it.
 */
export interface EtcdClientOptions {
  readonly hosts: string | readonly string[];
  readonly [option: string]: unknown;
}

/** An `Etcd3` client from the `etcd3` package (what the store uses of it), for reuse. */
export interface EtcdClientLike {
  readonly kv: object;
  readonly leaseClient: object;
  watch(): unknown;
  close(): void;
}

/**
 * Where the etcd store's locks live: a client URL (`http://host:2379`, `https://` for TLS), a list of
 * them (every member of the cluster, so a failed member is skipped), `etcd3` client options, or an
 * existing `Etcd3` client to reuse (the module then never closes it).
 */
export type EtcdConnectionOption = string | readonly string[] | EtcdClientOptions | EtcdClientLike;

export function isEtcdClient(value: unknown): value is EtcdClientLike {
  const candidate = value as Partial<EtcdClientLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.kv === 'object' &&
    typeof candidate.leaseClient === 'object' &&
    typeof candidate.watch === 'function' &&
    typeof candidate.close === 'function'
  );
}

const ENDPOINT = /^https?:\/\/[^/\s]+\/?$/;

/** True for `http(s)://host:port` (credentials in the URL are refused: etcd3 takes them as `auth`). */
export function isEtcdEndpoint(value: unknown): value is string {
  return typeof value === 'string' && ENDPOINT.test(value) && !value.includes('@');
}

/**
 * Host:port of every endpoint, for error messages: never a scheme's userinfo, never the `auth` option.
 * A reused client names the hosts it was built with (read from its options, which etcd3 keeps).
 */
export function describeEndpoints(option: EtcdConnectionOption): string {
  const hosts = isEtcdClient(option)
    ? (option as unknown as { options?: { hosts?: string | string[] } }).options?.hosts
    : typeof option === 'string' || Array.isArray(option)
      ? (option as string | string[])
      : (option as EtcdClientOptions).hosts;
  const list = (typeof hosts === 'string' ? [hosts] : Array.isArray(hosts) ? hosts : []) as string[];
  const names = list.map((host) => host.replace(/^https?:\/\//, '').replace(/^[^@/]*@/, '').replace(/\/$/, ''));
  return names.length > 0 ? names.join(',') : 'etcd (hosts unknown)';
}
