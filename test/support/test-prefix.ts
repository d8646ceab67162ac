import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';

/** A key prefix unique to one test file and run, so files can share one Redis and run in parallel. */
export function testPrefix(file: string): string {
  return `t:${basename(file).replace(/\.spec\.ts$/, '')}:${randomBytes(4).toString('hex')}:`;
}

export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the Jest global setup starts redis-server and sets it.');
  return url;
}
