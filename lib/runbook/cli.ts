#!/usr/bin/env node
import { Redis } from 'ioredis';
import { RedisLockRunbook } from './redis-lock.runbook.js';

const USAGE = `Usage: nestjs-distributed-lock <command> --redis <url> [--prefix lock:]
  list [glob]                       held locks: key, holder, fencing token, TTL
  inspect <key>                     one lock
  force-release <key> --confirm     delete a held lock whoever holds it (read the warning first)`;

const WARNING = `A lock that looks stuck may belong to a holder that is still running (GC pause, partitioned pod).
Before force-releasing: stop or isolate that holder, check its fencing token and TTL and the business data.
Whatever it still writes must be refused by the fencing token at the resource. Re-run with --confirm.`;

/** Flags followed by a value; every other word is the command or its key. */
const VALUE_FLAGS = new Set(['--redis', '--prefix']);

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
}

function describe(lock: { key: string; holder: string; fencingToken: number; ttlMs: number }): string {
  return `${lock.key}\tholder=${lock.holder}\tfencing=${lock.fencingToken}\tttl=${lock.ttlMs}ms`;
}

/** The runbook from the command line: list and inspect held locks, force-release one deliberately. */
async function main(args: string[]): Promise<number> {
  const redisUrl = option(args, 'redis') ?? process.env.REDIS_URL;
  const [command, target] = args.filter((arg, i) => !arg.startsWith('--') && !VALUE_FLAGS.has(args[i - 1] ?? ''));
  if (!redisUrl || !command) {
    console.error(USAGE);
    return 2;
  }
  if (command === 'force-release' && !args.includes('--confirm')) {
    console.error(WARNING);
    return 2;
  }
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    const runbook = new RedisLockRunbook(client, option(args, 'prefix') ?? 'lock:');
    if (command === 'list') {
      const held = await runbook.list(target);
      console.log(held.length ? held.map(describe).join('\n') : 'no held locks');
    } else if (command === 'inspect' && target) {
      const held = await runbook.inspect(target);
      console.log(held ? describe(held) : `${target} is not held`);
    } else if (command === 'force-release' && target) {
      const outcome = await runbook.forceRelease(target);
      if (outcome.released) console.log(`released ${target} (was holder=${outcome.lock.holder} fencing=${outcome.lock.fencingToken})`);
      else console.log(`${target} was not held`);
    } else {
      console.error(USAGE);
      return 2;
    }
    return 0;
  } finally {
    client.disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
