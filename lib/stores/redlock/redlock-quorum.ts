import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { RenewOutcome } from '../lock-store.interface.js';

/** Votes that decide: a majority, so that any two quorums share at least one master. */
export function quorumOf(masters: number): number {
  return Math.floor(masters / 2) + 1;
}

/** One master's answer to one call: its value, or why it gave none. */
export type MasterAnswer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** Asks every master at once and waits for every answer (each call is bounded by the command timeout). */
export function askEvery<M, T>(masters: readonly M[], ask: (master: M, index: number) => Promise<T>): Promise<MasterAnswer<T>[]> {
  return Promise.all(
    masters.map((master, index) => {
      try {
        return ask(master, index).then(
          (value): MasterAnswer<T> => ({ ok: true, value }),
          (error: unknown): MasterAnswer<T> => ({ ok: false, error }),
        );
      } catch (error) {
        return Promise.resolve<MasterAnswer<T>>({ ok: false, error });
      }
    }),
  );
}

/** The answers so far: `undefined` where a master has not answered yet. */
export type AnswersSoFar<T> = ReadonlyArray<MasterAnswer<T> | undefined>;

/**
 * Asks every master at once and resolves as soon as `decided` says the answers so far settle the
 * question (or once all answered): a dead master's calls wait out its reconnect attempts, and the
 * majority's answer must not wait for them. An answer that comes after is handed to `late`.
 */
export function askUntilDecided<M, T>(
  masters: readonly M[],
  ask: (master: M, index: number) => Promise<T>,
  decided: (answers: AnswersSoFar<T>) => boolean,
  late?: (answer: MasterAnswer<T>, index: number) => void,
): Promise<AnswersSoFar<T>> {
  const answers = new Array<MasterAnswer<T> | undefined>(masters.length);
  let pending = masters.length;
  let resolved = false;
  return new Promise((resolve) => {
    masters.forEach((master, index) => {
      void askEvery([master], (each) => ask(each, index)).then(([answer]) => {
        pending--;
        if (resolved) return late?.(answer!, index);
        answers[index] = answer;
        if (pending === 0 || decided(answers)) {
          resolved = true;
          resolve([...answers]);
        }
      });
    });
  });
}

/** Masters that gave no answer, each by server and reason, for an error's cause. */
export function describeFailures(answers: AnswersSoFar<unknown>, servers: readonly string[]): string {
  const failures: string[] = [];
  answers.forEach((answer, i) => {
    if (!answer) return void failures.push(`${servers[i]}: no answer yet`);
    if (answer.ok) return;
    const error = answer.error;
    // A store error's cause already names the server and the reason; anything else gets the server added.
    const cause = error instanceof LockStoreUnavailableError && error.cause instanceof Error ? error.cause : error;
    failures.push(cause instanceof Error ? cause.message : `${servers[i]}: ${String(cause)}`);
  });
  return failures.join('; ');
}

/**
 * Fails closed: `needed` masters had to answer and fewer did. The cause names every master that did not
 * and why (never a token: the per-master causes carry none).
 */
export function quorumUnavailable(operation: string, key: string, answers: AnswersSoFar<unknown>, servers: readonly string[]): LockStoreUnavailableError {
  const failed = answers.filter((answer) => !answer?.ok).length;
  const cause = new Error(
    `${failed} of ${answers.length} Redlock masters did not answer, and a majority (${quorumOf(answers.length)}) must: ${describeFailures(answers, servers)}`,
  );
  return new LockStoreUnavailableError(operation, key, { cause });
}

/**
 * One renewal by the quorum's votes: renewed when a majority renewed it, lost (`false`) when a majority says
 * the token no longer owns the key, unknown (an Error, retried until the lease's local deadline) otherwise.
 * A master that is down or slow therefore never costs a live lease while a majority still confirms it.
 */
export function renewalByVote(votes: readonly RenewOutcome[], servers: readonly string[]): RenewOutcome {
  const quorum = quorumOf(votes.length);
  let renewed = 0;
  let notOurs = 0;
  for (const vote of votes) {
    if (vote === true) renewed++;
    else if (vote === false) notOurs++;
  }
  if (renewed >= quorum) return true;
  if (notOurs >= quorum) return false;
  const unknown = votes.flatMap((vote, i) => (vote instanceof Error ? [`${servers[i]}: ${vote.message}`] : []));
  return new Error(
    `${renewed} of ${votes.length} Redlock masters renewed the lease and ${notOurs} no longer hold it; a majority (${quorum}) must agree either way` +
      (unknown.length > 0 ? ` (${unknown.join('; ')})` : ''),
  );
}

/**
 * The remaining lease a denial reports: the time until enough of the denying masters' keys have run out
 * for a majority to be free, -1 when one of those is unknown.
 */
export function ttlUntilQuorumFree(denials: readonly number[], masters: number): number {
  // With fewer denials than that (the others unanswered), the first to expire is the best estimate.
  const mustExpire = Math.max(1, denials.length - (masters - quorumOf(masters)));
  if (denials.length < mustExpire) return -1;
  const sorted = [...denials].sort((a, b) => a - b);
  const within = sorted.slice(0, mustExpire);
  return within.some((ttl) => ttl < 0) ? -1 : within[mustExpire - 1]!;
}

/** How many of the answers so far are values for which `test` holds. */
export function countAnswers<T>(answers: AnswersSoFar<T>, test: (value: T) => boolean): number {
  let count = 0;
  for (const answer of answers) if (answer?.ok && test(answer.value)) count++;
  return count;
}

/** How many masters answered with an error so far. */
export function countFailures(answers: AnswersSoFar<unknown>): number {
  return answers.filter((answer) => answer !== undefined && !answer.ok).length;
}
