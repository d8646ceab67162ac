import type { Redis } from 'ioredis';
import { LockConfigError } from '../../errors/lock-config.error.js';
import type { RedlockMasterNode } from './redlock-master.js';

/**
 * The oldest Redis a master may run: the second phase of every grant rewrites the lock value with
 * `SET … KEEPTTL` (scripts/quorum-fence.script.ts), which Redis 6.0 introduced. An older master answers
 * every phase 2 with a syntax error, which the vote counts as no answer: grants would fail, or rest on
 * the other masters alone, with no word of why.
 */
const NEEDED = { major: 6, minor: 0 } as const;
const NEEDED_TEXT = `Redis ${NEEDED.major}.${NEEDED.minor} or later`;

/**
 * Refuses, at startup, a master whose `INFO server` names a Redis older than {@link NEEDED}, with
 * `LockConfigError` naming that master's entry of `redlock.masters`, its address (host:port, never its
 * credentials), its version and the version needed. Every master is asked at once; one that does not
 * answer, or does not say (an ACL without +info, a server that reports no redis_version), is left alone:
 * the first lock call reports an unreachable master, and the check only refuses what it has read.
 */
export async function assertMastersRunRedis6(masters: readonly RedlockMasterNode[]): Promise<void> {
  const versions = await Promise.all(masters.map((master) => versionOf(master).catch(() => undefined)));
  versions.forEach((version, i) => {
    if (version === undefined || !olderThanNeeded(version)) return;
    const { server } = masters[i]!;
    throw new LockConfigError(
      `redlock.masters[${i}]`,
      server,
      `${NEEDED_TEXT} on every master (${server} runs Redis ${version}; each grant's fencing write uses SET … KEEPTTL, Redis 6.0): upgrade it or replace it`,
    );
  });
}

async function versionOf(master: RedlockMasterNode): Promise<string | undefined> {
  const info = await master.commands.run('connect', '*', undefined, (client) => (client as Redis).info('server'));
  return /^redis_version:(\S+)/m.exec(info)?.[1];
}

function olderThanNeeded(version: string): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number | undefined];
  if (!Number.isInteger(major)) return false;
  return major < NEEDED.major || (major === NEEDED.major && (minor ?? 0) < NEEDED.minor);
}
