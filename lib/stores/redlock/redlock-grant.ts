import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { clockDriftMs } from '../../lease/lease-deadline.js';
import type { AcquireResult, LockGranted } from '../lock-store.interface.js';
import type { RedisKeyLayout } from '../redis/redis-key-layout.js';
import type { RedlockMasterNode } from './redlock-master.js';
import {
  askEvery,
  askUntilDecided,
  countAnswers,
  countFailures,
  quorumOf,
  quorumUnavailable,
  ttlUntilQuorumFree,
  type AnswersSoFar,
  type MasterAnswer,
} from './redlock-quorum.js';
import { QUORUM_FENCE_SCRIPT } from './scripts/quorum-fence.script.js';

export interface GrantRequest {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
  readonly holder: string;
}

/**
 * One Redlock attempt, in two phases, both sent to every master at once:
 *
 * 1. the Redis store's acquire on each master (SET NX PX with the token; it issues that master's next
 *    fencing token from its slot counter in the same script);
 * 2. on the masters that granted, when they are a majority: the grant's token, the highest of theirs,
 *    written into each lock value and counter, token-checked (scripts/quorum-fence.script.ts).
 *
 * It is a grant when a majority confirmed phase 2 and the attempt took less than the lease's validity:
 * `leaseMs` less the time both phases took less the drift allowance (1 % + 2 ms, the published figure, and
 * the one every lease's local deadline uses: lease-deadline.ts). Otherwise every key the attempt got is
 * given back, token-checked, before it resolves; a call left unanswered is cleaned up by the master's
 * own store when its reply comes (guarantee 9). Each phase is decided as soon as its answers so far settle
 * it, so a dead master (whose calls wait out its reconnects) costs the majority nothing.
 *
 * Why the token is a fencing token (docs/stores.md): phase 2 lands on a master only while our key is there,
 * and a later contender's phase 1 there reads the counter only after our key is gone; a grant's phase-2
 * majority and any later grant's phase-1 majority share a master, so the later token is higher.
 */
export async function acquireOnQuorum(masters: readonly RedlockMasterNode[], layout: RedisKeyLayout, request: GrantRequest): Promise<AcquireResult> {
  const { key, token, leaseMs, holder } = request;
  const startedAt = Date.now();
  const n = masters.length;
  const quorum = quorumOf(n);
  const servers = masters.map((master) => master.server);
  let granted = false;
  // A master that grants after the attempt was decided: kept if the attempt is a grant (ours, released with
  // it), given back otherwise.
  const lateGrant = (answer: MasterAnswer<AcquireResult>, i: number): void => {
    if (answer.ok && answer.value.acquired && !granted) void giveBack([masters[i]!], key, token);
  };
  const firstPhase = await askUntilDecided(
    masters,
    (master) => master.store.acquire(key, token, leaseMs, holder),
    (answers) => {
      const yes = countAnswers(answers, (result) => result.acquired);
      const no = answers.filter((answer) => answer !== undefined).length - yes;
      return yes >= quorum || no > n - quorum;
    },
    lateGrant,
  );
  const grants = firstPhase.flatMap((answer, i) => (answer?.ok && answer.value.acquired ? [{ master: masters[i]!, fencingToken: answer.value.fencingToken }] : []));
  if (grants.length < quorum) {
    await giveBack(grants.map(({ master }) => master), key, token);
    // Too many silent masters to tell held from free: fail closed, never guess.
    if (countFailures(firstPhase) > n - quorum) throw quorumUnavailable('acquire', key, firstPhase, servers);
    return { acquired: false, ttlMs: ttlUntilQuorumFree(denials(firstPhase), n) };
  }
  const fencingToken = Math.max(...grants.map((grant) => grant.fencingToken));
  const lockKey = layout.lockKey(key);
  const fenceKey = layout.fenceKey(lockKey);
  const secondPhase = await askUntilDecided(
    grants,
    ({ master }) => master.commands.runScript('acquire', key, QUORUM_FENCE_SCRIPT, { lockKey, fenceKey, token, fencingToken }),
    (answers) => {
      const written = countAnswers(answers, (value) => value);
      return written >= quorum || answers.filter((answer) => answer !== undefined).length - written > grants.length - quorum;
    },
  );
  const confirmed = countAnswers(secondPhase, (value) => value);
  const elapsedMs = Date.now() - startedAt;
  const validityMs = leaseMs - elapsedMs - clockDriftMs(leaseMs);
  if (confirmed >= quorum && validityMs > 0) {
    granted = true;
    return { acquired: true, fencingToken } satisfies LockGranted;
  }
  await giveBack(grants.map(({ master }) => master), key, token);
  const why =
    confirmed < quorum
      ? `a majority granted the key, but only ${confirmed} of ${grants.length} kept it until its fencing token was written (a lease of ${leaseMs} ms shorter than a round trip?)`
      : `a majority granted the key after ${elapsedMs} ms, past the lease's validity (${leaseMs} ms less the drift allowance)`;
  throw new LockStoreUnavailableError('acquire', key, { cause: new Error(`${why}; what it got was given back`) });
}

/** Token-checked releases of an attempt's keys; an answerless one is the master store's to clean up. */
async function giveBack(masters: readonly RedlockMasterNode[], key: string, token: string): Promise<void> {
  await askEvery(masters, (master) => master.store.release(key, token, 0));
}

function denials(answers: AnswersSoFar<AcquireResult>): number[] {
  return answers.flatMap((answer) => (answer?.ok && !answer.value.acquired ? [answer.value.ttlMs] : []));
}
