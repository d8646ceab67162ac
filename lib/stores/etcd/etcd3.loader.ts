import type * as Etcd3Module from 'etcd3';
import { loadOptionalPeer } from '../../support/optional-peer.js';

export type Etcd3Package = typeof Etcd3Module;

/** Loads the `etcd3` package (an optional peer) when the etcd store is actually built. */
export function loadEtcd3(): Promise<Etcd3Package> {
  return loadOptionalPeer('etcd3', { option: 'store', value: 'etcd', isModule: (etcd3) => typeof etcd3.Etcd3 === 'function' });
}
