import type { LockModuleOptions } from '../../../lib/index';

/**
 * The lock module options of a worker process: Redis at REDIS_URL, unless the parent test asks for etcd
 * (LOCK_STORE=etcd, ETCD_ENDPOINTS=comma-separated client URLs). The shared resource a worker writes
 * stays in Redis either way: it is the thing being protected, not the lock.
 */
export function workerLockOptions(keyPrefix: string): LockModuleOptions {
  if (process.env.LOCK_STORE === 'etcd') {
    return { store: 'etcd', etcd: process.env.ETCD_ENDPOINTS!.split(','), keyPrefix };
  }
  return { redis: process.env.REDIS_URL!, keyPrefix };
}
