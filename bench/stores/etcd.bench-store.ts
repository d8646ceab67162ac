import { get } from 'node:http';
import { findEtcdBinary, startEtcdCluster } from '../../scripts/servers/etcd-server.js';
import type { BenchStore } from './bench-store.js';

/**
 * etcd: a private three-member cluster from Debian's package on free loopback ports (the helper the tests
 * use), the production shape: every write is a Raft round to a majority and an fsync on each member, all
 * three on this machine. Stock Raft timing (2 s minimum lease), so the bench's 10 s lease is one etcd grants.
 */
export const etcdBenchStore: BenchStore = {
  id: 'etcd',
  label: 'etcd (3-member cluster, leases and revisions)',
  unavailable: () => (findEtcdBinary() ? undefined : 'etcd is not installed (apt-get install etcd-server)'),
  async start() {
    const cluster = await startEtcdCluster({ size: 3 });
    try {
      const version = await serverVersion(cluster.endpoints[0]!);
      return {
        description: `etcd ${version} cluster of 3 members at ${cluster.endpoints.join(', ')} (private, started by the bench; the production shape)`,
        options: (keyPrefix) => ({ store: 'etcd', etcd: cluster.endpoints, keyPrefix }),
        stop: () => cluster.stop(),
      };
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  },
};

/** The member's `/version` (`{"etcdserver":"3.4.23",…}`). */
function serverVersion(clientUrl: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = get(`${clientUrl}/version`, { timeout: 2_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve((JSON.parse(body) as { etcdserver?: string }).etcdserver ?? '?');
        } catch (error) {
          reject(error);
        }
      });
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${clientUrl}/version timed out`)));
    request.on('error', reject);
  });
}
