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
  describeFailures,
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
  const lockKey = layout.lockKey(key);
  const fenceKey = layout.fenceKey(lockKey);
  // A master that grants after phase 1 was decided: its copy is kept while the attempt may still be a
  // grant (ours, released with it; a holder with more copies survives more crashes) and gets the grant's
  // token once there is one (its own first-phase token may be higher, and must never be shown as the
  // grant's); it is given back once the attempt failed.
  let outcome: 'pending' | 'granted' | 'failed' = 'pending';
  let fencingToken = 0;
  const lateCopies: RedlockMasterNode[] = [];
  const writeToken = (master: RedlockMasterNode): Promise<boolean> =>
    master.commands.runScript('acquire', key, QUORUM_FENCE_SCRIPT, { lockKey, fenceKey, token, fencingToken });
  const lateGrant = (answer: MasterAnswer<AcquireResult>, i: number): void => {
    if (!answer.ok || !answer.value.acquired) return;
    if (outcome === 'failed') void giveBack([masters[i]!], key, token);
    else if (outcome === 'granted') writeToken(masters[i]!).catch(ignore);
    else lateCopies.push(masters[i]!);
  };
  const fail = (got: readonly RedlockMasterNode[]): Promise<void> => {
    outcome = 'failed';
    return giveBack([...got, ...lateCopies], key, token);
  };
  const firstPhase = await askUntilDecided(
    masters,
    (master) => master.store.acquire(key, token, leaseMs, holder),
    // Early only on answers that say something: a majority granted, or enough denials that no majority can.
    // An error never decides: whether the key is held or the store is unavailable depends on the others.
    (answers) => countAnswers(answers, (result) => result.acquired) >= quorum || countAnswers(answers, (result) => !result.acquired) > n - quorum,
    lateGrant,
  );
  const grants = firstPhase.flatMap((answer, i) => (answer?.ok && answer.value.acquired ? [{ master: masters[i]!, fencingToken: answer.value.fencingToken }] : []));
  if (grants.length < quorum) {
    await fail(grants.map(({ master }) => master));
    // Too many silent masters to tell held from free: fail closed, never guess.
    if (countFailures(firstPhase) > n - quorum) throw quorumUnavailable('acquire', key, firstPhase, servers);
    return { acquired: false, ttlMs: ttlUntilQuorumFree(denials(firstPhase), n) };
  }
  fencingToken = Math.max(...grants.map((grant) => grant.fencingToken));
  const secondPhase = await askUntilDecided(
    grants,
    ({ master }) => writeToken(master),
    (answers) => {
      const written = countAnswers(answers, (value) => value);
      return written >= quorum || answers.filter((answer) => answer !== undefined).length - written > grants.length - quorum;
    },
  );
  const confirmed = countAnswers(secondPhase, (value) => value);
  const elapsedMs = Date.now() - startedAt;
  const validityMs = leaseMs - elapsedMs - clockDriftMs(leaseMs);
  if (confirmed >= quorum && validityMs > 0) {
    outcome = 'granted';
    for (const master of lateCopies) writeToken(master).catch(ignore);
    return { acquired: true, fencingToken } satisfies LockGranted;
  }
  await fail(grants.map(({ master }) => master));
  const silent = countFailures(secondPhase) > 0 ? `; ${describeFailures(secondPhase, grants.map(({ master }) => master.server))}` : '';
  const why =
    confirmed < quorum
      ? `a majority granted the key, but only ${confirmed} of ${grants.length} confirmed its fencing token${silent || ` (the others no longer held it: a lease of ${leaseMs} ms shorter than the round trips?)`}`
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

function ignore(): void {}
