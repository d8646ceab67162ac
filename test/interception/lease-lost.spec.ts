import { Injectable } from '@nestjs/common';
import { DistributedLock, LeaseLostError, LockService } from '../../lib/index';
import { gate, inspectionClient, redisLock, startLockedApp, type LockedApp } from '../decorator/locked-app';
import { storedLock } from '../support/stored-lock';
import { testPrefix } from '../support/test-prefix';

const PREFIX = testPrefix(__filename);

class ExportFailed extends Error {}

@Injectable()
class ExportJob {
  entered = gate();

  constructor(private readonly locks: LockService) {}

  /** Ignores the loss and returns normally: the call must still not report success. */
  @DistributedLock('export:{id}', { leaseMs: 300 })
  async runIgnoringLoss(id: string): Promise<string> {
    await this.untilLost();
    return 'looks fine';
  }

  /** Notices the loss through the lease signal and throws its own error. */
  @DistributedLock('export:{id}', { leaseMs: 300 })
  async runStoppingOnLoss(id: string): Promise<string> {
    const reason = await this.untilLost();
    throw new ExportFailed(`stopped: ${(reason as Error).name}`);
  }

  private untilLost(): Promise<unknown> {
    const signal = this.locks.current()!.signal;
    this.entered.open();
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
  }
}

describe('a locked method whose lease is lost while it runs', () => {
  const redis = inspectionClient();
  let app: LockedApp;

  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(PREFIX), providers: [ExportJob] });
  });

  afterAll(async () => {
    await app?.close();
    redis.disconnect();
  });

  /** Someone else's key replaces ours (an operator's force-release followed by another owner's grant). */
  async function takeOver(key: string): Promise<void> {
    await app.get(ExportJob).entered.promise;
    // Written the way the store writes a grant (see lib/stores/redis/scripts/lock-value.ts): the owner's
    // token, fencing token and holder.
    await redis.set(`${PREFIX}${key}`, '-another-owner|1|elsewhere', 'PX', 60_000);
  }

  beforeEach(() => {
    app.get(ExportJob).entered = gate();
  });

  it('ends in LeaseLostError even when the method returns normally', async () => {
    const call = app.get(ExportJob).runIgnoringLoss('1');
    const lost = app.next('lost', (event) => event.key === 'export:1');
    await takeOver('export:1');
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(error).toMatchObject({ key: 'export:1', reason: 'rejected' });
    expect((error as Error).cause).toBeUndefined();
    await expect(lost).resolves.toMatchObject({ key: 'export:1', reason: 'rejected' });
    // The other owner's key is untouched by the renewal and release attempts.
    await expect(storedLock(redis, `${PREFIX}export:1`)).resolves.toMatchObject({ token: 'another-owner' });
  });

  it("carries the method's own error as cause", async () => {
    const call = app.get(ExportJob).runStoppingOnLoss('2');
    await takeOver('export:2');
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect((error as LeaseLostError).cause).toBeInstanceOf(ExportFailed);
    expect(((error as LeaseLostError).cause as Error).message).toBe('stopped: LeaseLostError');
  });
});
