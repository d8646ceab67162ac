import { Cluster } from 'ioredis';
import { LockConfigError } from '../../lib/index';
import { freePort, startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { moduleStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';

const prefix = testPrefix(__filename);

/**
 * `{ cluster: [seeds] }` pointed at a Redis that runs without cluster mode: the server answers every
 * CLUSTER command with "ERR This instance has cluster support disabled", ioredis retries its slot refresh
 * forever, and every lock call used to fail as "did not answer within 1000 ms" although the server did.
 */
describe('the Cluster form against a Redis that is not in cluster mode', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it.each<[string, () => unknown]>([
    ['a redis:// seed', () => `redis://127.0.0.1:${server.port}`],
    ['a host:port seed', () => `127.0.0.1:${server.port}`],
    ['a { host, port } seed', () => ({ host: '127.0.0.1', port: server.port })],
  ])('fails the start with LockConfigError naming the server and the single-server form (%s)', async (_, seed) => {
    const error = await moduleStartError({ redis: { cluster: [seed() as string] }, keyPrefix: prefix, commandTimeoutMs: 1_000 });
    expect(error).toBeInstanceOf(LockConfigError);
    const { message } = error as Error;
    expect(message).toContain(`127.0.0.1:${server.port} is not in cluster mode`);
    expect(message).toContain('cluster support disabled');
    expect(message).toContain(`redis: 'redis://127.0.0.1:${server.port}'`);
  });

  it('fails the start even when another seed is unreachable (every seed that answers is asked)', async () => {
    const unreachable = await freePort();
    const error = await moduleStartError({
      redis: { cluster: [`127.0.0.1:${unreachable}`, `127.0.0.1:${server.port}`] },
      keyPrefix: prefix,
      commandTimeoutMs: 1_000,
    });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toContain(`127.0.0.1:${server.port} is not in cluster mode`);
  });

  it('fails the start the same way for a Cluster client handed in, and leaves that client to its owner', async () => {
    const client = new Cluster([{ host: '127.0.0.1', port: server.port }], { lazyConnect: true });
    try {
      const error = await moduleStartError({ redis: client, keyPrefix: prefix, commandTimeoutMs: 1_000 });
      expect(error).toBeInstanceOf(LockConfigError);
      expect((error as Error).message).toMatch(new RegExp(`"redis \\(the Cluster client\\)".*127\\.0\\.0\\.1:${server.port} is not in cluster mode`));
      expect(client.status).toBe('wait');
    } finally {
      client.disconnect();
    }
  });

  it('never prints the seed password', async () => {
    await server.stop();
    server = await startRedisServer({ args: () => ['--requirepass', 's3cret'] });
    const error = await moduleStartError({ redis: { cluster: [`redis://:s3cret@127.0.0.1:${server.port}`] }, keyPrefix: prefix, commandTimeoutMs: 1_000 });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toContain(`127.0.0.1:${server.port} is not in cluster mode`);
    expect((error as Error).message).not.toContain('s3cret');
  });
});
