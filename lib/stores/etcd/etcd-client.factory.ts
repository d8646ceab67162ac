import type { Etcd3, IOptions } from 'etcd3';
import { describeEndpoints, isEtcdClient, type EtcdClientOptions, type EtcdConnectionOption } from './etcd-connection-option.js';
import type { ShortLeasePolicy } from './etcd-lease-length.js';
import { EtcdLockStore } from './etcd-lock.store.js';
import { loadEtcd3 } from './etcd3.loader.js';
import { loadCockatiel, memberPolicy } from './etcd-host-policy.js';

export interface EtcdLockStoreSettings {
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  /** @default 'reject' */
  readonly shortLeases?: ShortLeasePolicy;
}

/**
 * Builds the etcd store: loads `etcd3` (only now: it is an optional peer), opens a client on the given
 * endpoints or options, or reuses the client handed in (which the store then never closes).
 */
export async function createEtcdLockStore(option: EtcdConnectionOption, settings: EtcdLockStoreSettings): Promise<EtcdLockStore> {
  const endpoints = describeEndpoints(option);
  const common = { ...settings, endpoints };
  if (isEtcdClient(option)) return new EtcdLockStore(option as unknown as Etcd3, { ...common, ownsClient: false });
  const [{ Etcd3: Client, isRecoverableError }, cockatiel] = await Promise.all([loadEtcd3(), loadCockatiel()]);
  const options: EtcdClientOptions =
    typeof option === 'string' ? { hosts: option } : Array.isArray(option) ? { hosts: [...(option as string[])] } : (option as EtcdClientOptions);
  const faultHandling = (options.faultHandling ?? {}) as NonNullable<IOptions['faultHandling']>;
  const client = new Client({
    ...(options as unknown as IOptions),
    // etcd3 waits up to 30 s between attempts to re-open a broken watch stream; waiters would sleep through
    // a failover. Retry within a second instead, and a member skipped after failures within a second too
    // (etcd-host-policy.ts). A user's own policies win.
    faultHandling: {
      host: memberPolicy(cockatiel, isRecoverableError),
      watchBackoff: reconnectBackoff(50) as NonNullable<IOptions['faultHandling']>['watchBackoff'],
      ...faultHandling,
    },
  });
  return new EtcdLockStore(client, { ...common, ownsClient: true });
}

const MAX_RECONNECT_DELAY_MS = 1_000;

/** Cockatiel's backoff shape, which etcd3's watch manager takes: doubling with jitter, up to a second. */
function reconnectBackoff(delayMs: number): { readonly duration: number; next(): unknown } {
  return {
    duration: delayMs * (0.5 + Math.random() / 2),
    next: () => reconnectBackoff(Math.min(MAX_RECONNECT_DELAY_MS, delayMs * 2)),
  };
}
