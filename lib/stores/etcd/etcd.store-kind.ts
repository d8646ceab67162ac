import { LockConfigError } from '../../errors/lock-config.error.js';
import { redactOptionValue } from '../../support/redact-option-value.js';
import { checkedAtStartup, refuseForeignConnection, type LockStoreKindDefinition } from '../lock-store-kind.interface.js';
import { createEtcdLockStore } from './etcd-client.factory.js';
import { isEtcdClient, isEtcdEndpoint, type EtcdConnectionOption } from './etcd-connection-option.js';

/** The module options of `store: 'etcd'`. */
export interface EtcdModuleOptions {
  /**
   * Where the locks live with `store: 'etcd'`: a client URL, the list of every member's URL, `etcd3` client
   * options, or an `Etcd3` client to reuse (never closed by the module). Requires the `etcd3` package.
   * Required when `store` is `'etcd'`; see docs/etcd.md for what it guarantees and how `leaseMs` maps to
   * etcd's whole-second leases.
   */
  etcd?: EtcdConnectionOption;
}

/** `store: 'etcd'`: consensus (unavailable rather than two holders), revision fencing, a queue in etcd. */
export const etcdStoreKind: LockStoreKindDefinition<'etcd', EtcdConnectionOption> = {
  name: 'etcd',
  optionNames: ['etcd'],
  storeClassName: 'EtcdLockStore',
  resolve: (options) => {
    assertEtcdOption(options.etcd);
    return options.etcd;
  },
  refuseForeign: (options, chosen) => refuseForeignConnection('etcd', 'etcd', options, chosen),
  create: async (connection, { keyPrefix, commandTimeoutMs, leaseMs }) =>
    checkedAtStartup(await createEtcdLockStore(connection, { keyPrefix, commandTimeoutMs }), (store) => store.checkLeaseLength(leaseMs)),
  runbook: {
    flag: 'etcd',
    env: 'ETCD_ENDPOINTS',
    address: '<http:// endpoint[,endpoint…]>',
    // Credentials go in the auth option, never the endpoint; a refused list is shown with every bad entry
    // masked, since the gRPC layer would otherwise echo the whole target, password included.
    checkAddress: (endpoints) => {
      const list = endpoints.split(',');
      if (list.every(isEtcdEndpoint)) return;
      throw new LockConfigError('--etcd', redactOptionValue(list, isEtcdEndpoint), 'http:// or https:// endpoints without credentials, separated by commas');
    },
    open: (endpoints, { keyPrefix, commandTimeoutMs }) => createEtcdLockStore(endpoints.split(','), { keyPrefix, commandTimeoutMs }),
  },
};

function assertEtcdOption(etcd: unknown): asserts etcd is EtcdConnectionOption {
  const expected = "an etcd client URL (http:// or https://, without credentials: use the auth option), a non-empty list of them, etcd3 options with hosts, or an Etcd3 client (required when store is 'etcd')";
  if (isEtcdEndpoint(etcd) || isEtcdClient(etcd)) return;
  if (Array.isArray(etcd) && etcd.length > 0 && etcd.every(isEtcdEndpoint)) return;
  if (typeof etcd === 'object' && etcd !== null && !Array.isArray(etcd)) {
    const { hosts } = etcd as { hosts?: unknown };
    const list = typeof hosts === 'string' ? [hosts] : hosts;
    if (Array.isArray(list) && list.length > 0 && list.every((host) => typeof host === 'string' && /^\S+$/.test(host) && !host.includes('@'))) return;
  }
  // A refused string may carry a password anywhere: it is masked whole; valid endpoints carry none.
  throw new LockConfigError('etcd', redactOptionValue(etcd, isEtcdEndpoint), expected);
}
