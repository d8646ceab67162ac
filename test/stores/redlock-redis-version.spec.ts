import { createServer, type Server, type Socket } from 'node:net';
import { DistributedLockModule, LockConfigError, type LockModuleOptions } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { appStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';
import { RedlockMasters } from './redlock-test-support';

/**
 * A server that answers what a connection and the startup check ask (AUTH, CLIENT SETNAME / SETINFO,
 * SELECT, INFO, PING, QUIT) as a Redis of `version` would, and nothing else. A fake because no Redis 5
 * binary is installed here (Debian ships 7), and the check reads only `INFO server`; every other command
 * gets an error, so a store that tried to lock on it would fail, not pass by accident. `commands` records
 * what was asked.
 */
async function startOldRedis(version: string): Promise<{ server: Server; port: number; commands: string[] }> {
  const commands: string[] = [];
  const info = `# Server\r\nredis_version:${version}\r\nredis_mode:standalone\r\n\r\n# Persistence\r\nloading:0\r\n`;
  const reply = (socket: Socket, words: string[]): void => {
    commands.push(words.join(' '));
    const name = words[0]!.toUpperCase();
    if (name === 'INFO') socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
    else if (name === 'PING') socket.write('+PONG\r\n');
    else if (['AUTH', 'CLIENT', 'SELECT', 'QUIT'].includes(name)) socket.write('+OK\r\n');
    else socket.write(`-ERR unknown command '${name}'\r\n`);
    if (name === 'QUIT') socket.end();
  };
  const server = createServer((socket) => {
    let buffered = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      // ioredis sends every command as an array of bulk strings: *<n>\r\n($<len>\r\n<word>\r\n){n}.
      for (let request = /^\*(\d+)\r\n/.exec(buffered); request; request = /^\*(\d+)\r\n/.exec(buffered)) {
        let at = request[0].length;
        const words: string[] = [];
        for (let i = 0; i < Number(request[1]); i++) {
          const header = /^\$(\d+)\r\n/.exec(buffered.slice(at));
          if (!header || buffered.length < at + header[0].length + Number(header[1]) + 2) return;
          at += header[0].length;
          words.push(buffered.slice(at, at + Number(header[1])));
          at += Number(header[1]) + 2;
        }
        buffered = buffered.slice(at);
        reply(socket, words);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, commands };
}

describe("store: 'redlock' refuses a master older than Redis 6 at startup", () => {
  let masters: RedlockMasters;
  beforeAll(async () => {
    masters = await RedlockMasters.start(2);
  });
  afterAll(() => masters.stop());

  const options = (second: string): LockModuleOptions => ({
    store: 'redlock',
    redlock: { masters: [masters.urls[0]!, second, masters.urls[1]!] },
    keyPrefix: testPrefix(__filename),
  });

  it('refuses a master that reports Redis 5.0.14 with LockConfigError naming its entry, its address (no password), its version and the version needed', async () => {
    const old = await startOldRedis('5.0.14');
    try {
      const url = `redis://:s3cret-password@127.0.0.1:${old.port}`;
      // forRootAsync: the store is built (and its masters asked) while Nest compiles the module.
      const error = await appStartError({ imports: [DistributedLockModule.forRootAsync({ useFactory: () => options(url) })] });
      expect(error).toBeInstanceOf(LockConfigError);
      expect(error).toMatchObject({ option: 'redlock.masters[1]' });
      const { message } = error as Error;
      expect(message).toContain(`127.0.0.1:${old.port} runs Redis 5.0.14`);
      expect(message).toContain('Redis 6.0 or later');
      expect(message).not.toContain('s3cret');
      expect(old.commands).toContain('info server');
    } finally {
      old.server.close();
    }
  });

  it('starts with a master that reports Redis 6.0.0, the oldest the scripts run on', async () => {
    const boundary = await startOldRedis('6.0.0');
    try {
      expect(await appStartError({ imports: [DistributedLockModule.forRoot(options(`redis://127.0.0.1:${boundary.port}`))] })).toBeUndefined();
      expect(boundary.commands).toContain('info server');
    } finally {
      boundary.server.close();
    }
  });

  it('starts on three Redis 7 masters and locks on them', async () => {
    const third = await RedlockMasters.start(1);
    const app = await createLockApp(options(third.urls[0]!));
    try {
      expect(await masters.ask(0, (redis) => redis.info('server'))).toMatch(/^redis_version:7\./m);
      expect(await app.locks.withLock('invoice:1', async (lease) => lease.fencingToken)).toBeGreaterThan(0);
    } finally {
      await app.close();
      await third.stop();
    }
  });
});
