import { LockConfigError } from '../../errors/lock-config.error.js';
import { checkedAtStartup, refuseForeignConnection, type LockStoreKindDefinition } from '../lock-store-kind.interface.js';
import { createZookeeperLockStore } from './zookeeper-client.factory.js';
import { isZookeeperConnectionOption, isZookeeperConnectString, type ZookeeperConnectionOption } from './zookeeper-connection-option.js';

/** The module options of `store: 'zookeeper'`. */
export interface ZookeeperModuleOptions {
  /**
   * Where the locks live with `store: 'zookeeper'`: a connect string (`'zk-0:2181,zk-1:2181,zk-2:2181'`,
   * every member, optionally with a chroot: `'…:2181/apps/orders'`) or the list of `host:port` members.
   * Requires the `node-zookeeper-client` package. Required when `store` is `'zookeeper'`; `leaseMs` becomes the
   * session timeout, which the server must grant as asked (see docs/zookeeper.md).
   */
  zookeeper?: ZookeeperConnectionOption;
}

const EXPECTED = "a ZooKeeper connect string ('host:port,host:port', optionally followed by a /chroot) or a non-empty list of 'host:port' members (required when store is 'zookeeper')";

/** `store: 'zookeeper'`: consensus (unavailable rather than two holders), czxid fencing, the session as the lease. */
export const zookeeperStoreKind: LockStoreKindDefinition<'zookeeper', ZookeeperConnectionOption> = {
  name: 'zookeeper',
  optionNames: ['zookeeper'],
  storeClassName: 'ZookeeperLockStore',
  resolve: (options) => {
    const connection = options.zookeeper;
    if (!isZookeeperConnectionOption(connection)) throw new LockConfigError('zookeeper', connection, EXPECTED);
    return connection;
  },
  refuseForeign: (options, chosen) => refuseForeignConnection('zookeeper', 'zookeeper', options, chosen),
  create: async (connection, { keyPrefix, commandTimeoutMs, leaseMs }) =>
    checkedAtStartup(await createZookeeperLockStore(connection, { keyPrefix, commandTimeoutMs }), (store) => store.checkLeaseLength(leaseMs)),
  runbook: {
    flag: 'zookeeper',
    env: 'ZOOKEEPER_CONNECT',
    address: '<host:port[,host:port…][/chroot]>',
    checkAddress: (connect) => {
      if (!isZookeeperConnectString(connect)) throw new LockConfigError('--zookeeper', connect, EXPECTED);
    },
    open: (connect, { keyPrefix, commandTimeoutMs }) => createZookeeperLockStore(connect, { keyPrefix, commandTimeoutMs }),
  },
};
