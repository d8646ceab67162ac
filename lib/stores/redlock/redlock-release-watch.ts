import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { RedlockMasterNode } from './redlock-master.js';
import { askUntilDecided, quorumOf, quorumUnavailable, type MasterAnswer } from './redlock-quorum.js';

/**
 * Release notifications from the masters: the listener is subscribed on every master (each through its
 * Redis store: release channel, and the current holder's value marked so that its release announces
 * itself), and any master's notification wakes it. Flowing means a majority subscribed: a release that
 * counts reached a majority of masters, and two majorities share one, so it is heard. A notification still
 * missed (a master that came back) is the waiter's fallback backoff's to cover.
 */
export class RedlockReleaseWatch {
  private readonly servers: string[];

  constructor(
    private readonly masters: readonly RedlockMasterNode[],
    private readonly timeoutMs: number,
  ) {
    this.servers = masters.map((master) => master.server);
  }

  async listen(key: string, listener: () => void): Promise<() => void> {
    const hear = oncePerRelease(this.masters.length, listener);
    const quorum = quorumOf(this.masters.length);
    let stopped = false;
    const stops: Array<() => void> = [];
    // A master that subscribes after the majority did still listens (it may be the one a release reaches
    // first), unless the listener stopped meanwhile.
    const late = (answer: MasterAnswer<() => void>): void => {
      if (!answer.ok) return;
      if (stopped) answer.value();
      else stops.push(answer.value);
    };
    const answers = await askUntilDecided(
      this.masters,
      (master, i) => this.subscribeWithin(master, key, () => hear(i)),
      (so) => so.filter((answer) => answer?.ok).length >= quorum,
      late,
    );
    for (const answer of answers) if (answer?.ok) stops.push(answer.value);
    const stop = (): void => {
      stopped = true;
      for (const each of stops.splice(0)) each();
    };
    if (stops.length >= quorum) return stop;
    stop();
    throw quorumUnavailable('subscribe', key, answers, this.servers);
  }

  /**
   * A subscription is bounded like a command: a master that does not confirm in time counts as not
   * subscribed, and should its confirmation come later, that subscription is stopped at once.
   */
  private subscribeWithin(master: RedlockMasterNode, key: string, listener: () => void): Promise<() => void> {
    const subscribing = master.store.onRelease(key, listener);
    return new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new LockStoreUnavailableError('subscribe', key, { cause: new Error(`${master.server} did not confirm the subscription within ${this.timeoutMs} ms`) }));
      }, this.timeoutMs);
      timer.unref();
      subscribing.then(
        (stop) => {
          clearTimeout(timer);
          if (late) stop();
          else resolve(stop);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

/**
 * One release reaches every master that held the grant, and each announces it: the listener hears it
 * once. Announcements are counted in rounds, one per release: the first master heard opens a round and
 * wakes the listener; the other masters' announcements join it silently; a master heard again (its next
 * release), or every master heard, closes it. A release that only some masters announced (one was down)
 * can at worst hold back the next release's wake-up until a second master announces it.
 */
export function oncePerRelease(masters: number, listener: () => void): (master: number) => void {
  const round = new Set<number>();
  return (master) => {
    if (round.has(master)) round.clear();
    const first = round.size === 0;
    round.add(master);
    if (round.size === masters) round.clear();
    if (first) listener();
  };
}
