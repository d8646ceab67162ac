import { freePorts, startRedisServer } from '../../scripts/servers/redis-server.js';
import type { BenchStore } from './bench-store.js';

/**
 * Redlock: three private redis-server processes on free loopback ports (the helper the tests use), the
 * smallest quorum, next to the one Redis of the Redis row: what the quorum costs over one server.
 */
export const redlockBenchStore: BenchStore = {
  id: 'redlock',
  label: 'Redlock (3 independent Redis masters)',
  async start() {
    const servers = await Promise.all((await freePorts(3)).map((port) => startRedisServer({ port })));
    const masters = servers.map((server) => server.url);
    return {
      description: `Redlock on 3 private redis-server masters at ${masters.join(', ')}`,
      options: (keyPrefix) => ({ store: 'redlock', redlock: { masters }, keyPrefix }),
      stop: async () => void (await Promise.all(servers.map((server) => server.stop()))),
    };
  },
};
