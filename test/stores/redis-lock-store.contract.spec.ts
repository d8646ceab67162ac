import { RedisLockStore } from '../../lib/index';
import { createRedisConnection } from '../../lib/stores/redis/redis-client.factory';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { describeLockStoreContract } from './lock-store.contract';

describeLockStoreContract('RedisLockStore', async () => ({
  store: new RedisLockStore(createRedisConnection(redisUrl()), {
    keyPrefix: testPrefix(__filename),
    commandTimeoutMs: 5_000,
  }),
}));
