import type { AcquireResult, ForceReleaseResult, HeldLock, LockStore, RenewOutcome, RenewRequest } from '../../lib/index';

/**
 * A store passed through unchanged, writing down what the waiter side saw in order: each acquisition's
 * answer (`granted`/`denied`) and each release notification delivered to it (`notified`). A waiter woken
 * by the release has `notified` right before its `granted`; one woken by its backoff has not.
 */
export class RecordingStore implements LockStore {
  readonly timeline: string[] = [];
  private readonly changed = new Set<() => void>();

  constructor(readonly inner: LockStore) {}

  /** Resolves once the timeline satisfies `condition` (checked after every entry). */
  until(condition: (timeline: readonly string[]) => boolean): Promise<void> {
    if (condition(this.timeline)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (!condition(this.timeline)) return;
        this.changed.delete(check);
        resolve();
      };
      this.changed.add(check);
    });
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const result = await this.inner.acquire(key, token, leaseMs, holder);
    this.add(result.acquired ? 'granted' : 'denied');
    return result;
  }

  onRelease(key: string, listener: () => void): Promise<() => void> {
    return this.inner.onRelease(key, () => {
      this.add('notified');
      listener();
    });
  }

  release(key: string, token: string, keepMs: number): Promise<boolean> {
    return this.inner.release(key, token, keepMs);
  }
  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return this.inner.renew(requests);
  }
  inspect(key: string): Promise<HeldLock | null> {
    return this.inner.inspect(key);
  }
  list(match?: string): Promise<HeldLock[]> {
    return this.inner.list(match);
  }
  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    return this.inner.forceRelease(key, fencingToken);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }

  private add(entry: string): void {
    this.timeline.push(entry);
    for (const check of [...this.changed]) check();
  }
}
