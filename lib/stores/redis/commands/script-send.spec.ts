import type { RedisClient } from '../connection/redis-client';
import type { RedisConnection } from '../connection/redis-connection';
import { defineScript } from '../scripts/redis-script';
import { RedisCommands } from './redis-commands';
import { clusterRedirect, isNoScript } from './script-send';

const SCRIPT = defineScript({
  lua: 'return 1',
  numKeys: 1,
  keysAndArgs: (input: { readonly key: string }) => [input.key],
  parse: (reply) => reply,
});

/** A connection over a stand-in client: the error shapes of a Cluster client under failover cannot be provoked on demand. */
function standIn(client: object): RedisConnection {
  return { client, epoch: 0, sharded: false, whenReady: () => undefined, server: () => 'stand-in' } as unknown as RedisConnection;
}

describe('the script send path', () => {
  it.each([
    'NOSCRIPT No matching script. Please use EVAL.',
    // ioredis' Cluster wraps the last error of a command that was redirected many times (a failover).
    'Too many Cluster redirections. Last error: ReplyError: NOSCRIPT No matching script. Please use EVAL.',
  ])('falls back to EVAL on %j, once', async (message) => {
    const calls: string[] = [];
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
    const commands = new RedisCommands(standIn(client), 1_000);
    expect(await commands.runScript('test', 'k', SCRIPT, { key: 'k' })).toBe(1);
    expect(calls).toEqual(['evalsha', 'eval']);
    commands.close();
  });

  it('falls back to EVAL in the acknowledged pipeline too, and reports the replicas that acknowledged', async () => {
    const sent: string[][] = [];
    const client = {
      pipeline: () => {
        const commands: string[] = [];
        sent.push(commands);
        return {
          evalsha: () => commands.push('evalsha'),
          eval: () => commands.push('eval'),
          wait: (replicas: number, timeoutMs: number) => commands.push(`wait ${replicas} ${timeoutMs}`),
          exec: async () => (commands[0] === 'evalsha' ? [[new Error('NOSCRIPT No matching script. Please use EVAL.'), null], [null, 1]] : [[null, 7], [null, 1]]),
        };
      },
    } as unknown as RedisClient;
    const commands = new RedisCommands(standIn(client), 1_000, 2);
    expect(await commands.runAcknowledged('test', 'k', SCRIPT, { key: 'k' })).toEqual({ result: 7, acknowledged: 1 });
    expect(sent).toEqual([
      ['evalsha', 'wait 2 500'],
      ['eval', 'wait 2 500'],
    ]);
    commands.close();
  });

  it('does not mistake other errors for NOSCRIPT', () => {
    expect(isNoScript(new Error('ERR Error running script: NOSCRIPT in a string'))).toBe(false);
    expect(isNoScript(new Error('Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN'))).toBe(false);
  });

  it('reads a Cluster redirect from a reply error, and nothing from any other error', () => {
    const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    expect(clusterRedirect(reply('MOVED 6093 127.0.0.1:30002'))).toEqual({ kind: 'MOVED', node: '127.0.0.1:30002' });
    expect(clusterRedirect(reply('ASK 740 127.0.0.1:30003'))).toEqual({ kind: 'ASK', node: '127.0.0.1:30003' });
    expect(clusterRedirect(reply('TRYAGAIN Multiple keys request during rehashing of slot'))).toEqual({ kind: 'TRYAGAIN' });
    expect(clusterRedirect(reply('ERR MOVED 1 a:1 inside a script error'))).toBeUndefined();
    expect(clusterRedirect(new Error('MOVED 6093 127.0.0.1:30002'))).toBeUndefined();
  });
});
