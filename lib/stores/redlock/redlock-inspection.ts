import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { ForceReleaseResult, HeldLock } from '../lock-store.interface.js';
import type { RedisKeyLayout } from '../redis/redis-key-layout.js';
import type { RedlockMasterNode } from './redlock-master.js';
import { askEvery, quorumOf, quorumUnavailable } from './redlock-quorum.js';
import { LOCK_COPY_SCRIPT, type LockCopy } from './scripts/lock-copy.script.js';

/** A lock as the quorum holds it: the token a majority of masters hold the key under. */
interface QuorumHold {
  readonly lock: HeldLock;
  readonly token: string;
}

/**
 * What the runbook sees of a Redlock key: held when a majority of masters hold it under one token (a
 * minority's copies are an attempt that failed, or the remains of a lease that lapsed, and grant nobody).
 * The fencing token is the one a majority of those copies carry, the grant's (phase 2 wrote it on a
 * majority; a copy it missed carries its master's own first-phase token); the TTL is the time until fewer than a
 * majority of them are left.
 */
export class RedlockInspection {
  private readonly servers: string[];

  constructor(
    private readonly masters: readonly RedlockMasterNode[],
    private readonly layout: RedisKeyLayout,
  ) {
    this.servers = masters.map((master) => master.server);
  }

  async inspect(key: string): Promise<HeldLock | null> {
    return (await this.hold(key, 'inspect'))?.lock ?? null;
  }

  /** Every key any master holds under `match`, each looked at by the quorum; needs a majority to answer. */
  async list(match: string): Promise<HeldLock[]> {
    const listed = await askEvery(this.masters, (master) => master.store.list(match));
    if (listed.filter((answer) => answer.ok).length < quorumOf(this.masters.length)) throw quorumUnavailable('list', match, listed, this.servers);
    const keys = new Set(listed.flatMap((answer) => (answer.ok ? answer.value.map((lock) => lock.key) : [])));
    const held: HeldLock[] = [];
    for (const key of [...keys].sort()) {
      const hold = await this.hold(key, 'list');
      if (hold) held.push(hold.lock);
    }
    return held;
  }

  /**
   * Takes the quorum's lock away, token-checked on every master (its releases wake the waiters the
   * masters know of), so a holder granted after the look is never the one removed. With `fencingToken`,
   * only if that is the grant holding the key.
   */
  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const hold = await this.hold(key, 'force-release');
    if (!hold) return { released: false, reason: 'not-held' };
    if (fencingToken !== undefined && hold.lock.fencingToken !== fencingToken) return { released: false, reason: 'fencing-mismatch', current: hold.lock };
    const released = await askEvery(this.masters, (master) => master.store.release(key, hold.token, 0));
    if (released.filter((answer) => answer.ok && answer.value).length < quorumOf(this.masters.length)) {
      throw new LockStoreUnavailableError('force-release', key, {
        cause: new Error(`fewer than a majority of the Redlock masters confirmed the release; look again before retrying`),
      });
    }
    return { released: true, lock: hold.lock };
  }

  private async hold(key: string, operation: string): Promise<QuorumHold | null> {
    const lockKey = this.layout.lockKey(key);
    const copies = await askEvery(this.masters, (master) => master.commands.runScript(operation, key, LOCK_COPY_SCRIPT, { lockKey }));
    const quorum = quorumOf(this.masters.length);
    const byToken = new Map<string, LockCopy[]>();
    for (const answer of copies) {
      if (!answer.ok || !answer.value) continue;
      const same = byToken.get(answer.value.token) ?? [];
      same.push(answer.value);
      byToken.set(answer.value.token, same);
    }
    for (const [token, same] of byToken) {
      if (same.length < quorum) continue;
      const fencingToken = grantToken(same, quorum);
      const ttls = same.map((copy) => copy.ttlMs).sort((a, b) => b - a);
      const holder = same.find((copy) => copy.fencingToken === fencingToken)!.holder;
      return { token, lock: { key, fencingToken, holder, ttlMs: ttls[quorum - 1]! } };
    }
    // Nobody holds a majority; unless the silent masters could make one, the key is not held.
    const unanswered = copies.filter((answer) => !answer.ok).length;
    const largest = Math.max(0, ...[...byToken.values()].map((same) => same.length));
    if (largest + unanswered >= quorum && unanswered > 0) throw quorumUnavailable(operation, key, copies, this.servers);
    return null;
  }
}

/** The token phase 2 wrote on a majority of the copies; failing that (a grant still being made), the highest. */
function grantToken(copies: readonly LockCopy[], quorum: number): number {
  const counts = new Map<number, number>();
  for (const { fencingToken } of copies) counts.set(fencingToken, (counts.get(fencingToken) ?? 0) + 1);
  for (const [fencingToken, count] of counts) if (count >= quorum) return fencingToken;
  return Math.max(...copies.map((copy) => copy.fencingToken));
}
