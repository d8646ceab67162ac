import type { RedisClient } from '../connection/redis-client';
import { isNoScript, RedisScript } from './define-script';

describe('RedisScript', () => {
  it.each([
    'NOSCRIPT No matching script. Please use EVAL.',
    // ioredis' Cluster wraps the last error of a command that was redirected many times (a failover).
    'Too many Cluster redirections. Last error: ReplyError: NOSCRIPT No matching script. Please use EVAL.',
  ])('falls back to EVAL on %j', async (message) => {
    const calls: string[] = [];
    // The error shapes of a Cluster client under failover cannot be provoked on demand: a stand-in throws them.
    const client = {
      evalsha: async () => {
        calls.push('evalsha');
        throw new Error(message);
      },
      eval: async () => {
        calls.push('eval');
        return 1;
      },
    } as unknown as RedisClient;
    expect(await new RedisScript('return 1').run(client, ['k'], [])).toBe(1);
    expect(calls).toEqual(['evalsha', 'eval']);
  });

  it('does not mistake other errors for NOSCRIPT', () => {
    expect(isNoScript(new Error('ERR Error running script: NOSCRIPT in a string'))).toBe(false);
    expect(isNoScript(new Error('Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN'))).toBe(false);
  });
});
