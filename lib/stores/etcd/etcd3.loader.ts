import type * as Etcd3Module from 'etcd3';
import { LockConfigError } from '../../errors/lock-config.error.js';

export type Etcd3Package = typeof Etcd3Module;

/**
 * Loads the `etcd3` package when the etcd store is actually built, never at import time: it is an
 * optional peer dependency, and applications on Redis must not need it. The CommonJS build of this
 * library requires it (which is also what Jest's module registry sees); the ES module build imports it.
 */
export async function loadEtcd3(): Promise<Etcd3Package> {
  try {
    const loaded = (typeof require === 'function' ? require('etcd3') : await import('etcd3')) as Etcd3Package & {
      default?: Etcd3Package;
    };
    return typeof loaded.Etcd3 === 'function' ? loaded : loaded.default!;
  } catch (error) {
    throw new LockConfigError(
      'store',
      'etcd',
      `the "etcd3" package installed next to this library (npm install etcd3): ${(error as Error).message}`,
    );
  }
}
