import { replyCode } from './redis-commands';

describe('the code of a reply error', () => {
  const reply = (message: string): Error => Object.assign(new Error(message), { name: 'ReplyError' });

  it('is read from the reply as ioredis gives it, and from the failure describe() makes of it', () => {
    expect(replyCode(reply("NOPERM this user has no permissions to run the 'wait' command"))).toBe('NOPERM');
    expect(replyCode(reply("127.0.0.1:6379 replied ERR unknown command 'WAIT'"))).toBe('ERR');
    expect(replyCode(reply('127.0.0.1:6379 replied BUSY Redis is busy running a script.'))).toBe('BUSY');
  });

  it('is nothing for a failure that is no reply', () => {
    expect(replyCode(new Error('127.0.0.1:6379 replied ERR but this is no ReplyError'))).toBeUndefined();
    expect(replyCode(Object.assign(new Error('127.0.0.1:6379 is unreachable (connect ECONNREFUSED)'), { name: 'Error' }))).toBeUndefined();
  });
});
