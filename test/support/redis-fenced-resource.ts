import { Redis } from 'ioredis';

/** Applies a write only under a fencing token greater than the last one applied (one script: atomic). */
const FENCED_WRITE = `
local last = tonumber(redis.call('HGET', KEYS[1], 'token') or '0')
if tonumber(ARGV[2]) <= last then return 0 end
redis.call('HSET', KEYS[1], 'token', ARGV[2], 'value', ARGV[1])
return 1`;

/**
 * A record in the test run's Redis that accepts a write only with a fencing token greater than the last
 * one applied: the final arbiter the seeds ask for, for drills on stores other than PostgreSQL.
 */
export class RedisFencedResource {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly key: string,
  ) {
    this.redis = new Redis(url);
  }

  /** True when the write was applied, false when an equal or newer token had already written. */
  async write(value: string, fencingToken: number): Promise<boolean> {
    return (await this.redis.eval(FENCED_WRITE, 1, this.key, value, String(fencingToken))) === 1;
  }

  async read(): Promise<{ value: string; token: number } | undefined> {
    const record = await this.redis.hgetall(this.key);
    return record.value === undefined ? undefined : { value: record.value, token: Number(record.token) };
  }

  close(): void {
    this.redis.disconnect();
  }
}
