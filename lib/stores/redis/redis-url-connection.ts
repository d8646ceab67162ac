import { RedisCommands } from './commands/redis-commands.js';
import type { RedisConnection } from './connection/redis-connection.js';
import { createRedisConnection, type RedisConnectionSettings } from './connection/redis-client.factory.js';
import { redactUrl } from './connection/redis-connection.option.js';
import { runsInClusterMode } from './connection/redis-nodes.js';

/**
 * A connection for a bare URL that may point at one node of a Redis Cluster (an operator pastes the address
 * they have): asks the server, and when it runs in cluster mode opens a Cluster client seeded with it, so
 * that listing covers every primary and no command ends in MOVED. Rejects with the server and the reason
 * when it does not answer.
 */
export async function connectToRedisUrl(url: string, settings: RedisConnectionSettings & { timeoutMs: number }): Promise<RedisConnection> {
  const probe = createRedisConnection(url, settings);
  let info: string;
  try {
    info = await new RedisCommands(probe, settings.timeoutMs).run('connect', redactUrl(url), undefined, (client) => client.info('cluster'));
  } catch (error) {
    await probe.close();
    throw error;
  }
  if (!runsInClusterMode(info)) return probe;
  await probe.close();
  const { hostname, port, username, password, protocol } = new URL(url);
  return createRedisConnection(
    {
      cluster: [{ host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || 6379) }],
      redisOptions: {
        ...(username ? { username: decodeURIComponent(username) } : {}),
        ...(password ? { password: decodeURIComponent(password) } : {}),
        ...(protocol === 'rediss:' ? { tls: {} } : {}),
      },
    },
    settings,
  );
}
