import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockStore,
  PrefixSurvey,
  PrefixSurveyLimits,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { ownershipTokenProblem } from '../ownership-token.js';
import { RedisKeyLayout } from '../redis/redis-key-layout.js';
import { LOCK_VALUE_SEPARATOR } from '../redis/scripts/lock-value.js';
import { acquireOnQuorum } from './redlock-grant.js';
import { RedlockInspection } from './redlock-inspection.js';
import { RedlockMasterNode } from './redlock-master.js';
import type { RedlockMaster } from './redlock-masters.option.js';
import { askEvery, askUntilDecided, countAnswers, quorumOf, quorumUnavailable, renewalByVote, type AnswersSoFar } from './redlock-quorum.js';
import { RedlockReleaseWatch } from './redlock-release-watch.js';
import { assertMastersRunRedis6 } from './redlock-version.check.js';

export interface RedlockLockStoreOptions {
  readonly keyPrefix: string;
  /** How long one master's call may take before its outcome counts as unknown. */
  readonly commandTimeoutMs: number;
}

/**
 * Redlock over N independent Redis masters: every verb is the single-server Redis store's, sent to every
 * master at once, and decided by a majority (redlock-grant.ts for grants, redlock-quorum.ts for the rest).
 * What it promises and where it stops: docs/redlock.md.
 */
export class RedlockLockStore implements LockStore {
  private readonly masters: RedlockMasterNode[];
  private readonly layout: RedisKeyLayout;
  private readonly inspection: RedlockInspection;
  private readonly releases: RedlockReleaseWatch;
  private readonly servers: string[];
  private readonly quorum: number;

  constructor(masters: readonly RedlockMaster[], options: RedlockLockStoreOptions) {
    this.masters = masters.map((master) => RedlockMasterNode.open(master, options));
    this.layout = new RedisKeyLayout(options.keyPrefix);
    this.inspection = new RedlockInspection(this.masters, this.layout);
    this.releases = new RedlockReleaseWatch(this.masters, options.commandTimeoutMs);
    this.servers = this.masters.map((master) => master.server);
    this.quorum = quorumOf(this.masters.length);
  }

  /** The masters' addresses (host:port), in the configured order. */
  get masterServers(): readonly string[] {
    return this.servers;
  }

  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    // Refused here, not by every master: N identical refusals would read as N masters down.
    const problem = ownershipTokenProblem(token) ?? (token.includes(LOCK_VALUE_SEPARATOR) ? new TypeError(`An ownership token must not contain "${LOCK_VALUE_SEPARATOR}".`) : undefined);
    if (problem) return Promise.reject(problem);
    return acquireOnQuorum(this.masters, this.layout, { key, token, leaseMs, holder });
  }

  /**
   * On every master; true when a majority released (or kept, with `keepMs`) it, false when a majority says
   * the token no longer owns it, unknown (rejects) otherwise: a release some masters missed is not a loss.
   */
  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const decided = (answers: AnswersSoFar<boolean>): boolean =>
      countAnswers(answers, (released) => released) >= this.quorum || countAnswers(answers, (released) => !released) >= this.quorum;
    const answers = await askUntilDecided(this.masters, (master) => master.store.release(key, token, keepMs), decided);
    const released = countAnswers(answers, (value) => value);
    const notOurs = countAnswers(answers, (value) => !value);
    if (released >= this.quorum) return true;
    if (notOurs >= this.quorum) return false;
    throw quorumUnavailable('release', key, answers, this.servers);
  }

  /** One batch per master, all at once; each lease decided by vote (see {@link renewalByVote}). */
  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    if (requests.length === 0) return [];
    const votesOf = (answers: AnswersSoFar<RenewOutcome[]>, i: number): RenewOutcome[] =>
      answers.map((answer) => (answer === undefined ? NO_ANSWER_YET : answer.ok ? answer.value[i]! : asError(answer.error)));
    // Decided once every lease is: a majority renewed it, or a majority says it is not ours.
    const decided = (answers: AnswersSoFar<RenewOutcome[]>): boolean => requests.every((_, i) => !(renewalByVote(votesOf(answers, i), this.servers) instanceof Error));
    const answers = await askUntilDecided(this.masters, (master) => master.store.renew(requests), decided);
    return requests.map((_, i) => renewalByVote(votesOf(answers, i), this.servers));
  }

  onRelease(key: string, listener: () => void): Promise<() => void> {
    return this.releases.listen(key, listener);
  }

  inspect(key: string): Promise<HeldLock | null> {
    return this.inspection.inspect(key);
  }

  list(match = '*'): Promise<HeldLock[]> {
    return this.inspection.list(match);
  }

  /**
   * Each master's bounded survey (counts only, never a token), merged: a prefix counts what the master that
   * holds most of its locks counts (a held lock has a copy on a majority, so each master sees most of them),
   * complete only when every master answered and finished its walk.
   */
  async heldUnderOtherPrefixes(limits?: PrefixSurveyLimits): Promise<PrefixSurvey> {
    const answers = await askEvery(this.masters, (master) => master.store.heldUnderOtherPrefixes(limits));
    if (answers.filter((answer) => answer.ok).length < this.quorum) throw quorumUnavailable('list', '*', answers, this.servers);
    const held = new Map<string, number>();
    let complete = true;
    for (const answer of answers) {
      if (!answer.ok) {
        complete = false;
        continue;
      }
      complete &&= answer.value.complete;
      for (const { prefix, held: count } of answer.value.prefixes) held.set(prefix, Math.max(held.get(prefix) ?? 0, count));
    }
    const prefixes = [...held].map(([prefix, count]) => ({ prefix, held: count }));
    prefixes.sort((a, b) => b.held - a.held || (a.prefix < b.prefix ? -1 : 1));
    return { prefixes, complete };
  }

  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    return this.inspection.forceRelease(key, fencingToken);
  }

  /** At startup: refuses a master older than Redis 6 that answers (see redlock-version.check.ts). */
  checkMasterVersions(): Promise<void> {
    return assertMastersRunRedis6(this.masters);
  }

  /** Up while a majority answers: that is all a grant needs. */
  async ping(): Promise<void> {
    const answers = await askUntilDecided(this.masters, (master) => master.store.ping(), (so) => so.filter((answer) => answer?.ok).length >= this.quorum);
    if (answers.filter((answer) => answer?.ok).length < this.quorum) throw quorumUnavailable('ping', '*', answers, this.servers);
  }

  async close(): Promise<void> {
    await askEvery(this.masters, (master) => master.close());
  }
}

/** A master's vote while it has not answered (only read once every lease is decided without it). */
const NO_ANSWER_YET = new Error('no answer yet');

function asError(error: unknown): Error {
  if (error instanceof LockStoreUnavailableError && error.cause instanceof Error) return error.cause;
  return error instanceof Error ? error : new Error(String(error));
}
