import type { BenchStore } from './bench-store.js';

/** The Redis every other scenario uses. */
export const redisBenchStore: BenchStore = {
  id: 'redis',
  label: 'Redis (single primary)',
  async start(context) {
    const info = await context.admin.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
    return {
      description: `Redis ${version} at ${context.redisUrl}`,
      options: (keyPrefix) => ({ redis: context.redisUrl, keyPrefix }),
      stop: async () => undefined,
    };
  },
};
