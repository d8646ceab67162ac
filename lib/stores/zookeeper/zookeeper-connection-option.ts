/**
 * Where the ZooKeeper store's locks live: a connect string (`host:port,host:port`, every member of the
 * ensemble, optionally followed by a chroot path: `zk-0:2181,zk-1:2181/apps/orders`), or the list of
 * `host:port` members.
 */
export type ZookeeperConnectionOption = string | readonly string[];

const MEMBER = /^[A-Za-z0-9._-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$/;
const CHROOT = /^(\/[A-Za-z0-9._~%-]+)+$/;

/** True for `host:port` (no scheme, no credentials: ZooKeeper takes none in its address). */
export function isZookeeperMember(value: unknown): value is string {
  return typeof value === 'string' && MEMBER.test(value);
}

/** True for a connect string: members separated by commas, then an optional chroot. */
export function isZookeeperConnectString(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const slash = value.indexOf('/');
  const members = slash < 0 ? value : value.slice(0, slash);
  if (slash >= 0 && !CHROOT.test(value.slice(slash))) return false;
  return members.split(',').every(isZookeeperMember);
}

export function isZookeeperConnectionOption(value: unknown): value is ZookeeperConnectionOption {
  if (isZookeeperConnectString(value)) return true;
  return Array.isArray(value) && value.length > 0 && value.every(isZookeeperMember);
}

/** The connect string the client takes. */
export function connectStringOf(option: ZookeeperConnectionOption): string {
  return typeof option === 'string' ? option : option.join(',');
}
