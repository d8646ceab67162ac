import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

/**
 * Polls `condition` until it holds: for servers converging (a cluster agreeing on its slots, sentinels
 * finding each other), where there is no event to wait on. `what` names the condition in the timeout error.
 */
export async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One question to the server on a loopback port, over a connection opened and closed for it. */
export async function askRedis<T>(port: number, query: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await query(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * SIGSTOP, returning only once every thread of the process has stopped. `kill` returns when the signal is
 * queued; a thread running on the other core goes on until it is next scheduled, and on a loaded box that
 * was long enough for a server to answer one more request that a test had paused it to leave unanswered.
 */
export function stopProcess(child: ChildProcess): void {
  child.kill('SIGSTOP');
  const giveUpAt = Date.now() + 5_000;
  while (!allThreadsStopped(child.pid!)) {
    if (Date.now() > giveUpAt) throw new Error(`process ${child.pid} did not stop within 5 s of SIGSTOP`);
  }
}

function allThreadsStopped(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).every((task) => {
      // The state is the field after the command name, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state === 'T' || state === 't' || state === 'Z' || state === 'X';
    });
  } catch {
    // No /proc (not Linux), or the process is gone: nothing to wait for.
    return true;
  }
}
