import { LockStoreUnavailableError } from '../../../errors/lock-store-unavailable.error.js';
import { Wake } from '../../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest, QueuedWakeUpCause } from '../../lock-store.interface.js';
import type { GrantListener, GrantSubscription } from '../channels/grant-channel.js';
import { grantProof, QUEUE_HEARTBEAT_MS } from '../scripts/queue.lua.js';
import type { SentCommand } from '../commands/redis-commands.js';
import type { ContendedKeys } from './contended-keys.js';
import type { FairQueueContext } from './fair-queue-context.js';
import type { QueueProtocol } from './queue-protocol.js';
import { QueueCalls } from './redis-queue-calls.js';
import { QueueWaitCleanUp } from './queue-wait-clean-up.js';
import { NextLook } from './next-look.js';
import { retryDelayMs } from '../../../support/retry-delay.js';

/** One acquisition's wait in one key's queue: the plain one, or its shaped waiters' (see `QueueProtocol`). */
export class QueueWait implements GrantListener {
  private readonly calls: QueueCalls;
  private readonly heartbeatMs: number;
  /** Made when the wait first sleeps: an uncontended acquisition never does. */
  declare private sleeper?: Wake;
  private attempts = 0;
  private failures = 0;
  private lastError?: LockStoreUnavailableError;
  /** In the queue (as far as we know). */
  private queued = false;
  /** The grant channel's, from the wait's first sleep in line. */
  private subscription?: GrantSubscription;
  /** Told about hand-offs by the grant channel: from when it first stands in line. */
  private registered = false;
  /** Send time of the latest call that found us waiting: a hand-off came later. */
  private lastQueuedAt = 0;
  private readonly nextLook: NextLook;
  /** Why the wait's current call is made (see NextLook); undefined for the first pass. */
  private wokenBy?: QueuedWakeUpCause;
  /** Set by the grant channel: the key was handed to us. */
  private handedFence?: number;
  /** Its calls whose outcome was unknown, and their clean-up. */
  private readonly cleanUp: QueueWaitCleanUp;
  /** Set once a place in line was given up, lost or maybe doubled: announced grants are looked at first. */
  private verifyGrants = false;

  constructor(
    private readonly context: FairQueueContext,
    contended: ContendedKeys,
    protocol: QueueProtocol,
    private readonly request: QueuedAcquireRequest,
    private readonly id: number,
  ) {
    this.heartbeatMs = Math.min(request.leaseMs, QUEUE_HEARTBEAT_MS);
    this.nextLook = new NextLook(this.heartbeatMs);
    this.calls = new QueueCalls(context, contended, protocol, request, id, this.heartbeatMs);
    this.cleanUp = new QueueWaitCleanUp(this.calls, () => context.release(request.key, request.token));
  }

  private get wake(): Wake {
    return (this.sleeper ??= new Wake());
  }

  granted(fencingToken: number, proof: string): void {
    // A message the store did not send (anybody may publish) only wakes the waiter: a look decides. So does
    // one after a place was taken back, lost or maybe doubled (verifyGrants): it may be another place's.
    if (this.verifyGrants || fencingToken <= 0 || proof !== grantProof(this.request.token, fencingToken)) return this.recheck(0);
    this.handedFence = fencingToken;
    this.wake.fire();
  }

  recheck(delayMs: number): void {
    this.nextLook.bringForward(Date.now() + delayMs + 1, 'notification');
    this.wake.fire();
  }

  async run(): Promise<QueuedAcquireOutcome> {
    const { key, token, signal } = this.request;
    const { grants } = this.context;
    try {
      // The first pass inline: an uncontended acquisition is one script call, and no further step.
      const first = await this.join();
      const outcome = first ?? (await this.wait());
      if (outcome.result.acquired && signal?.aborted) {
        // A grant that raced the abort is released (which hands the key on).
        await this.context.release(key, token).catch(() => undefined);
        signal.throwIfAborted();
      }
      if (!outcome.result.acquired) this.cleanUp.giveUp();
      return outcome;
    } catch (error) {
      // Aborted (the caller, shutdown), or a failure that is not the store's: the place is given up, and a
      // grant that raced it is released.
      if (this.queued || this.handedFence !== undefined) await this.abandon();
      this.cleanUp.giveUp();
      throw error;
    } finally {
      if (this.registered) grants.unregister(this.id);
      this.subscription?.unsubscribe();
    }
  }

  private async wait(): Promise<QueuedAcquireOutcome> {
    const { deadline, signal } = this.request;
    for (;;) {
      signal?.throwIfAborted();
      // The first pass always runs, however close the deadline: one full attempt, as a plain acquire makes.
      if (this.attempts > 0 && Date.now() >= deadline) return await this.leaveAtDeadline();
      if (!this.queued) {
        const joined = await this.join();
        if (joined) return joined;
        if (!this.queued) {
          await this.backOff();
          continue;
        }
      }
      const waited = await this.waitInLine();
      if (waited) return waited;
      // Out of line after a grant the replicas did not acknowledge (given back): the backoff first.
      if (this.failures > 0) await this.backOff();
    }
  }

  /** Grant, or a place at the end of the line (`queued`); undefined after a store error. */
  private async join(): Promise<QueuedAcquireOutcome | undefined> {
    await this.cleanUp.settled();
    const sentAt = Date.now();
    const epoch = this.context.epoch();
    this.attempts++;
    let reply;
    try {
      reply = await this.calls.join(this.joinUnknown);
    } catch (error) {
      this.failed(error);
      return undefined;
    }
    this.failures = 0;
    this.lastError = undefined;
    if (reply.granted) return this.accept(reply.fencingToken, sentAt, undefined, this.wokenBy);
    this.queued = true;
    this.lastQueuedAt = sentAt;
    // A reply in another epoch may answer a second delivery, in line twice (see verifyGrants).
    const resent = this.context.epoch() !== epoch;
    if (resent) this.verifyGrants = true;
    if (!this.registered) {
      // A hand-off announced before this reply arrived is delivered now (see GrantChannel.register).
      this.registered = true;
      this.context.grants.register(this.id, this);
    }
    if (resent) this.nextLook.schedule(0, undefined); // the look drops a duplicate entry
    else this.nextLook.heartbeatAfter(sentAt);
    return undefined;
  }

  /** Until granted (or the deadline); undefined when our place was lost and we must join again. */
  private async waitInLine(): Promise<QueuedAcquireOutcome | undefined> {
    const { deadline, signal } = this.request;
    if (!this.subscription) {
      // Not awaited: while the subscriber comes up (a start, a reconnect, a failover) the waiter looks at the
      // line on its heartbeat (which gets it the key even with no grant channel), deadline and abort hold.
      this.subscription = this.context.grants.subscribe(this.calls.tag);
      this.subscription.ready.then((subscribedAt) => this.caughtUp(subscribedAt), () => undefined);
    }
    for (;;) {
      if (this.handedFence !== undefined) return this.accept(this.handedFence, this.lastQueuedAt, this.heartbeatMs, 'notification');
      signal?.throwIfAborted();
      const now = Date.now();
      if (now >= deadline) return this.leaveAtDeadline();
      if (now >= this.nextLook.at) {
        this.wokenBy = this.nextLook.cause;
        const checked = await this.check();
        if (checked === 'gone') return undefined;
        if (checked) return checked;
        continue;
      }
      await this.wake.wait(Math.min(deadline, this.nextLook.at), signal);
    }
  }

  /** Subscribed only now: a hand-off may have been announced before anyone listened. */
  private caughtUp(subscribedAt: number): void {
    if (subscribedAt <= this.lastQueuedAt) return;
    this.nextLook.bringForward(0, undefined);
    this.wake.fire();
  }

  private async check(): Promise<QueuedAcquireOutcome | 'gone' | undefined> {
    const sentAt = Date.now();
    this.attempts++;
    let reply;
    try {
      reply = await this.calls.check(this.calls.entry(), this.cleanUp.lateReply);
    } catch (error) {
      this.failed(error);
      this.nextLook.schedule(Date.now() + retryDelayMs(this.failures), 'backoff');
      return undefined;
    }
    this.failures = 0;
    this.lastError = undefined;
    // Granted by this look, or a hand-off it found: either way the store keeps it a whole lease from the look.
    if (reply.status === 'granted') return (await this.accept(reply.fencingToken, sentAt, undefined, this.wokenBy)) ?? 'gone';
    if (reply.status === 'gone') {
      this.queued = false;
      this.verifyGrants = true;
      return 'gone';
    }
    // A hand-off comes after this look: the lease it grants counts from here at the earliest.
    this.lastQueuedAt = sentAt;
    this.nextLook.heartbeatAfter(sentAt);
    // First in line: look again when the holder's TTL runs out (a holder that died releases nothing).
    if (reply.position === 1 && reply.holderTtlMs >= 0) this.nextLook.bringForward(Date.now() + reply.holderTtlMs + 1, 'expiry');
    return undefined;
  }

  /** At the deadline: out of the queue; a hand-off that came first is kept (it is a grant within the wait). */
  private async leaveAtDeadline(): Promise<QueuedAcquireOutcome> {
    const handed = this.handedFence !== undefined && (await this.accept(this.handedFence, this.lastQueuedAt, this.heartbeatMs, 'notification'));
    if (handed) return handed;
    if (this.queued) {
      let fence: number | undefined;
      try {
        fence = await this.cleanUp.leave();
      } catch (error) {
        void this.abandon();
        throw error;
      }
      this.queued = false;
      if (fence !== undefined) {
        // Handed over after our latest call that found us waiting, unless some call's outcome was unknown:
        // a join re-sent, or retried after a clean-up that never answered, may stand behind an entry of our
        // own that was handed the key before it. Then when its heartbeat-long hold began is not known, and
        // it is given back (it hands the key on) rather than counted from a time that may come after it.
        if (this.cleanUp.uncertain) await this.context.release(this.request.key, this.request.token).catch(() => undefined);
        else {
          const kept = await this.accept(fence, this.lastQueuedAt, this.heartbeatMs, 'deadline');
          if (kept) return kept;
        }
      }
    }
    if (this.lastError) throw this.lastError;
    return { result: { acquired: false, ttlMs: -1 }, attempts: this.attempts, leaseStartedAt: Date.now() };
  }

  /** Out of the queue, and the key released if it was handed to us meanwhile; failures are the store's to outlive. */
  private async abandon(): Promise<void> {
    this.queued = false;
    const fence = this.handedFence ?? (await this.cleanUp.leave().catch(() => undefined));
    if (fence !== undefined) await this.context.release(this.request.key, this.request.token).catch(() => undefined);
  }

  /** A join whose outcome is unknown: cleaned up, and announced grants are looked at first from then on. */
  private readonly joinUnknown = (call: SentCommand): void => {
    this.verifyGrants = true;
    this.cleanUp.joinUnknown(call);
  };

  private failed(error: unknown): void {
    if (!(error instanceof LockStoreUnavailableError)) throw error;
    this.lastError = error;
    this.failures++;
  }

  /**
   * A grant, handed out as it is; with `replicas` only once they acknowledged it (AcknowledgedGrants.confirm:
   * one more round trip, a token-checked renewal to the whole lease with WAIT after it, from whose send time
   * the lease then counts). Not acknowledged, it was given back (which hands the key on): undefined, the
   * failure kept, and the wait joins again after its backoff, as a plain waiter retries such a grant.
   */
  private accept(
    fencingToken: number,
    leaseStartedAt: number,
    grantedTtlMs: number | undefined,
    grantedOn: QueuedWakeUpCause | undefined,
  ): QueuedAcquireOutcome | Promise<QueuedAcquireOutcome | undefined> {
    const { acknowledged } = this.context;
    if (!acknowledged) return this.outcome(fencingToken, leaseStartedAt, grantedTtlMs, grantedOn);
    this.queued = false;
    this.handedFence = undefined;
    const { key, token, leaseMs } = this.request;
    const sentAt = Date.now();
    this.attempts++;
    return acknowledged.confirm(key, token, leaseMs, this.cleanUp.lateReply).then(
      () => this.outcome(fencingToken, sentAt, undefined, grantedOn),
      (error: unknown) => {
        // An announcement from now on may be of the grant given back: looked at first.
        this.verifyGrants = true;
        this.failed(error);
        return undefined;
      },
    );
  }

  private outcome(fencingToken: number, leaseStartedAt: number, grantedTtlMs: number | undefined, grantedOn: QueuedWakeUpCause | undefined): QueuedAcquireOutcome {
    this.queued = false;
    this.handedFence = undefined;
    const optional = { ...(grantedTtlMs === undefined ? {} : { grantedTtlMs }), ...(grantedOn === undefined ? {} : { grantedOn }) };
    return { result: { acquired: true, fencingToken }, attempts: this.attempts, leaseStartedAt, ...optional };
  }

  private async backOff(): Promise<void> {
    await this.wake.wait(Math.min(this.request.deadline, Date.now() + retryDelayMs(this.failures)), this.request.signal);
    this.wokenBy = 'backoff';
  }
}
