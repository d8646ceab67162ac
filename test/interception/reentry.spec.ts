import { Injectable } from '@nestjs/common';
import { DistributedLock, LockReentryError, LockService, LockStore } from '../../lib/index';
import { redisLock, startLockedApp, type LockedApp } from '../decorator/locked-app';
import { testPrefix } from '../support/test-prefix';

const PREFIX = testPrefix(__filename);
/** Far longer than the test timeout: a call that waited for its own caller's lock would time the test out. */
const WAIT_FOREVER_MS = 600_000;

@Injectable()
class AccountService {
  private running = 0;
  maxRunning = 0;

  constructor(private readonly locks: LockService) {}

  // Fail-fast mode (default).
  @DistributedLock('account:{id}', { waitMs: WAIT_FOREVER_MS })
  async close(id: string): Promise<void> {
    await this.viaHelper(id);
  }

  /** Not locked: re-entry through other calls in the same async chain. */
  private async viaHelper(id: string): Promise<void> {
    await Promise.resolve();
    await this.audit(id);
  }

  @DistributedLock('account:{id}', { waitMs: WAIT_FOREVER_MS })
  async audit(id: string): Promise<void> {}

  // Joining mode.
  @DistributedLock('account:{id}', { waitMs: WAIT_FOREVER_MS, reentrant: true })
  async transfer(id: string): Promise<object> {
    const outer = this.locks.current()!;
    const inner = await this.fee(id);
    const stillHeld = await this.store().inspect(`account:${id}`);
    return { outer: outer.fencingToken, inner, heldAfterInner: stillHeld?.fencingToken };
  }

  @DistributedLock('account:{id}', { waitMs: WAIT_FOREVER_MS, reentrant: true })
  async fee(id: string): Promise<number> {
    return this.exclusive(() => this.locks.current()!.fencingToken);
  }

  @DistributedLock('account:{id}', { waitMs: WAIT_FOREVER_MS, reentrant: true })
  async settle(id: string): Promise<number[]> {
    return Promise.all([this.fee(id), this.fee(id), this.fee(id)]);
  }

  /** Siblings locking another key than their caller's: plain mutual exclusion, no re-entry involved. */
  @DistributedLock('account:{id}', { waitMs: WAIT_FOREVER_MS })
  async notify(id: string, channel: string): Promise<void> {
    await Promise.all([this.send(channel), this.send(channel), this.send(channel)]);
  }

  @DistributedLock('channel:{channel}', { waitMs: WAIT_FOREVER_MS })
  async send(channel: string): Promise<void> {
    await this.exclusive(() => undefined);
  }

  store(): LockStore {
    return (this.locks as unknown as { store: LockStore }).store;
  }

  private async exclusive<T>(fn: () => T): Promise<T> {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return fn();
    } finally {
      this.running--;
    }
  }
}

describe('re-entering a held key from inside its own locked call', () => {
  let app: LockedApp;
  let accounts: AccountService;

  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(PREFIX), providers: [AccountService] });
    accounts = app.get(AccountService);
  });

  afterAll(() => app?.close());

  beforeEach(() => {
    accounts.maxRunning = 0;
  });

  it('fails fast with LockReentryError instead of waiting for itself (default)', async () => {
    const error = await accounts.close('a1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockReentryError);
    expect(error).toMatchObject({ key: 'account:a1', code: 'LOCK_REENTRY' });
    expect(app.recorded('contention').filter((event) => event.key === 'account:a1')).toEqual([]);
    // The outer lease was released on the way out.
    await expect(app.get<LockStore>(LockStore).inspect('account:a1')).resolves.toBeNull();
  });

  it('with reentrant: true joins the held lease and releases it only at the outermost exit', async () => {
    const result = (await accounts.transfer('a2')) as { outer: number; inner: number; heldAfterInner: number };
    expect(result.inner).toBe(result.outer);
    expect(result.heldAfterInner).toBe(result.outer);
    await expect(app.get<LockStore>(LockStore).inspect('account:a2')).resolves.toBeNull();
    expect(app.recorded('acquired').filter((event) => event.key === 'account:a2')).toHaveLength(1);
  });

  it('keeps Promise.all siblings that re-enter the held key mutually excluded', async () => {
    const tokens = await accounts.settle('a3');
    expect(new Set(tokens).size).toBe(1);
    expect(accounts.maxRunning).toBe(1);
  });

  it('does not treat Promise.all siblings locking another key as re-entry of each other', async () => {
    await accounts.notify('a4', 'email');
    expect(accounts.maxRunning).toBe(1);
    expect(app.recorded('acquired').filter((event) => event.key === 'channel:email')).toHaveLength(3);
  });
});
