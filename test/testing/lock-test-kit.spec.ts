import { Test, type TestingModule } from '@nestjs/testing';
import {
  DistributedLockModule,
  LeaseLostError,
  LockConfigError,
  LockService,
  LockStore,
  LockStoreUnavailableError,
  MemoryLockStore,
} from 'nestjs-distributed-lock';
import { FaultInjectingLockStore, LockTestingModule, LockTestKit, type LockTestingModuleOptions } from 'nestjs-distributed-lock/testing';
import { redisUrl, testPrefix } from '../support/test-prefix';

interface TestApp {
  readonly moduleRef: TestingModule;
  readonly locks: LockService;
  readonly kit: LockTestKit;
}

const apps: TestingModule[] = [];

async function testApp(options: LockTestingModuleOptions = {}): Promise<TestApp> {
  const moduleRef = await Test.createTestingModule({ imports: [LockTestingModule.forRoot(options)] }).compile();
  await moduleRef.init();
  apps.push(moduleRef);
  return { moduleRef, locks: moduleRef.get(LockService), kit: moduleRef.get(LockTestKit) };
}

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('LockTestingModule', () => {
  it('gives two applications with the same prefix one namespace: they exclude each other like two pods', async () => {
    const prefix = testPrefix(__filename);
    const a = await testApp({ keyPrefix: prefix });
    const b = await testApp({ keyPrefix: prefix });
    const elsewhere = await testApp({ keyPrefix: `${prefix}other:` });
    const lease = await a.locks.acquire('shared');
    expect(await b.locks.tryAcquire('shared')).toBeNull();
    const apart = await elsewhere.locks.tryAcquire('shared');
    expect(apart).not.toBeNull();
    await apart!.release();
    await lease.release();
    const next = await b.locks.tryAcquire('shared');
    expect(next!.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next!.release();
  });

  it('keeps isGlobal optional: with isGlobal false, importing the testing module still provides LockService', async () => {
    const { locks } = await testApp({ keyPrefix: testPrefix(__filename), isGlobal: false });
    await expect(locks.withLock('k', () => 'ran')).resolves.toBe('ran');
  });
});

describe('LockTestKit', () => {
  it('holds a key from another instance until released; the holder shows in the store', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const hold = await kit.holdFromAnotherInstance('report', { holder: 'pod-b' });
    expect(await kit.inspect('report')).toMatchObject({ holder: 'pod-b', fencingToken: hold.fencingToken });
    expect(await locks.tryAcquire('report')).toBeNull();
    await expect(kit.holdFromAnotherInstance('report')).rejects.toThrow(LockConfigError);
    await hold.release();
    await hold.release();
    const lease = await locks.tryAcquire('report');
    expect(lease!.fencingToken).toBeGreaterThan(hold.fencingToken);
    await lease!.release();
  });

  it('wakes a waiter when the other instance releases, instead of letting it wait out waitMs', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const hold = await kit.holdFromAnotherInstance('queue');
    const contention = kit.nextEvent('contention', { key: 'queue' });
    const waiting = locks.acquire('queue', { waitMs: 30_000 });
    await contention;
    await hold.release();
    const lease = await waiting;
    expect(kit.recorded('acquired', { key: 'queue' })[0]!.attempts).toBeGreaterThan(1);
    await lease.release();
  });

  it('fails acquisitions with LockStoreUnavailableError until restored, and only for the faulted key', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const fault = kit.failAcquires({ key: 'down' });
    await expect(locks.tryAcquire('down')).rejects.toThrow(LockStoreUnavailableError);
    const other = await locks.tryAcquire('up');
    await other!.release();
    expect(fault.failures).toBe(1);
    fault.restore();
    expect(fault.active).toBe(false);
    const lease = await locks.tryAcquire('down');
    await lease!.release();
  });

  it('with times: 1, a waiting acquisition rides out the blip (it retries store errors within waitMs)', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const fault = kit.failAcquires({ times: 1 });
    const lease = await locks.acquire('blip', { waitMs: 5_000 });
    expect(fault).toMatchObject({ failures: 1, active: false });
    expect(kit.recorded('acquired', { key: 'blip' })[0]!.attempts).toBe(2);
    await lease.release();
  });

  it('takes the whole store down: health checks reject, and held leases are lost at their deadline', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const lease = await locks.acquire('outage', { leaseMs: 300 });
    const lost = kit.nextEvent('lost', { key: 'outage' });
    const outage = kit.storeOutage();
    await expect(locks.checkHealth()).rejects.toThrow(LockStoreUnavailableError);
    expect(await lost).toMatchObject({ reason: 'expired' });
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(kit.recorded('renew-failed', { key: 'outage' }).length).toBeGreaterThan(0);
    outage.restore();
    await expect(locks.checkHealth()).resolves.toMatchObject({ watchdog: { watched: 0 } });
  });

  it('a hanging fault leaves calls unanswered until restored, then they reject (a server that stopped answering)', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const fault = kit.store.fail({ operations: ['ping'], effect: 'hang' });
    let settled = false;
    const check = locks.checkHealth().finally(() => (settled = true));
    const other = await locks.tryAcquire('still-answers');
    await other!.release();
    expect(settled).toBe(false);
    fault.restore();
    await expect(check).rejects.toThrow(LockStoreUnavailableError);
  });

  it('loses a held lease at the next renewal (rejected), and with takeOver another instance holds the key', async () => {
    const { locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    const lease = await locks.acquire('job');
    const event = await kit.loseLease('job', { takeOver: true });
    expect(event).toMatchObject({ key: 'job', reason: 'rejected', fencingToken: lease.fencingToken });
    expect(lease.held).toBe(false);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(await kit.inspect('job')).toMatchObject({ holder: 'another-instance' });
    await expect(kit.loseLease('nobody-holds-this')).rejects.toThrow(LockConfigError);
  });

  it('rejects a wait for an event that never comes with a message naming it', async () => {
    const { kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    await expect(kit.nextEvent('lost', { key: 'x' }, { timeoutMs: 20 })).rejects.toThrow('No "lost" lock event matching the filter within 20 ms.');
  });

  it('lets app.close() finish while an outage is in force and frees what other instances held', async () => {
    const prefix = testPrefix(__filename);
    const { moduleRef, locks, kit } = await testApp({ keyPrefix: prefix });
    await locks.acquire('held-at-close');
    await kit.holdFromAnotherInstance('foreign-at-close');
    kit.storeOutage();
    await moduleRef.close();
    const probe = new MemoryLockStore({ keyPrefix: prefix });
    expect(await probe.inspect('held-at-close')).toBeNull();
    expect(await probe.inspect('foreign-at-close')).toBeNull();
  });

  it('does not wait at app.close() for a locked call a test left running: it ends in LeaseLostError (shutdown)', async () => {
    const { moduleRef, locks, kit } = await testApp({ keyPrefix: testPrefix(__filename) });
    let finish!: () => void;
    const entered = kit.nextEvent('acquired', { key: 'left-running' });
    const running = locks.withLock('left-running', () => new Promise<void>((resolve) => (finish = resolve)));
    await entered;
    await moduleRef.close();
    finish();
    await expect(running).rejects.toMatchObject({ code: 'LEASE_LOST', reason: 'shutdown' });
  });

  it('works for an application built from its own module, with the LockStore provider overridden', async () => {
    const prefix = testPrefix(__filename);
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: redisUrl(), keyPrefix: prefix })],
    })
      .overrideProvider(LockStore)
      .useValue(new FaultInjectingLockStore(new MemoryLockStore({ keyPrefix: prefix })))
      .compile();
    await moduleRef.init();
    apps.push(moduleRef);
    const kit = LockTestKit.of(moduleRef);
    await kit.holdFromAnotherInstance('k');
    expect(await moduleRef.get(LockService).tryAcquire('k')).toBeNull();
    await kit.reset();
  });

  it('refuses an application whose store cannot inject faults, naming the fix', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ store: 'memory', keyPrefix: testPrefix(__filename) })],
    }).compile();
    await moduleRef.init();
    apps.push(moduleRef);
    expect(() => LockTestKit.of(moduleRef)).toThrow(/FaultInjectingLockStore: import LockTestingModule\.forRoot\(\)/);
  });
});
