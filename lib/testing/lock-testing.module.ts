import { Module, type DynamicModule } from '@nestjs/common';
import { LockEvents } from '../events/lock-events.js';
import { DistributedLockModule } from '../module/distributed-lock.module.js';
import type { LockModuleOptions } from '../options/lock-module-options.interface.js';
import { LockStore } from '../stores/lock-store.interface.js';
import { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
import { FaultInjectingLockStore } from './fault-injecting-lock.store.js';
import { LockTestKit } from './lock-test-kit.js';

/** Options of {@link LockTestingModule.forRoot}: the module's own options, less where the locks live. */
export interface LockTestingModuleOptions extends Omit<LockModuleOptions, 'redis' | 'store'> {
  /**
   * Makes `LockService`, `LockEvents` and `LockTestKit` injectable everywhere, as `isGlobal` does for the
   * real module.
   * @default true
   */
  readonly isGlobal?: boolean;
  /**
   * How often held leases are renewed. Short by default, so a lease taken away in a test is noticed at
   * once (`LockTestKit.loseLease`); renewals on the memory store cost nothing.
   * @default min(100, leaseMs / 3)
   */
  readonly renewIntervalMs?: number;
  /**
   * How long a call waits for a held key before `LockNotAcquiredError`. Short by default, so a test that
   * holds a key from "another instance" sees the failure well within Jest's 5 s test timeout.
   * @default 500
   */
  readonly waitMs?: number;
  /**
   * How long `app.close()` lets locked calls still running finish. None by default: in a test, a lease
   * still held at close is a leftover, and waiting for it only slows the suite.
   * @default 0
   */
  readonly shutdownGraceMs?: number;
}

/** Default renew interval under test: fast enough that `loseLease` resolves in about 100 ms. */
const TEST_RENEW_INTERVAL_MS = 100;

/** Default wait under test: a tenth of Jest's default test timeout. */
const TEST_WAIT_MS = 500;

/**
 * `DistributedLockModule` on the in-process memory store, for users' unit and e2e tests, plus a
 * {@link LockTestKit} to play the other instances and the faults:
 *
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [LockTestingModule.forRoot()],
 *   providers: [OrderService],
 * }).compile();
 * await moduleRef.init();               // binds @DistributedLock methods to this app's LockService
 * const kit = moduleRef.get(LockTestKit);
 * ```
 *
 * The memory store's namespace is the process and `keyPrefix`: two applications built with the same prefix
 * exclude each other exactly like two pods on one Redis; give a test its own prefix to keep it apart.
 */
@Module({})
export class LockTestingModule {
  static forRoot(options: LockTestingModuleOptions = {}): DynamicModule {
    const { isGlobal = true, ...lockOptions } = options;
    const leaseMs = lockOptions.leaseMs ?? 30_000;
    const renewIntervalMs = lockOptions.renewIntervalMs ?? Math.max(1, Math.min(TEST_RENEW_INTERVAL_MS, Math.floor(leaseMs / 3)));
    return {
      module: LockTestingModule,
      global: isGlobal,
      imports: [
        DistributedLockModule.forRootAsync({
          isGlobal,
          // A store per application (the factory runs once per app), sharing the namespace of its prefix.
          useFactory: (): LockModuleOptions => ({
            ...lockOptions,
            renewIntervalMs,
            waitMs: lockOptions.waitMs ?? TEST_WAIT_MS,
            shutdownGraceMs: lockOptions.shutdownGraceMs ?? 0,
            store: new FaultInjectingLockStore(new MemoryLockStore({ keyPrefix: lockOptions.keyPrefix })),
          }),
        }),
      ],
      providers: [
        {
          provide: LockTestKit,
          inject: [LockStore, LockEvents],
          useFactory: (store: FaultInjectingLockStore, events: LockEvents) => new LockTestKit(store, events),
        },
      ],
      exports: [LockTestKit, DistributedLockModule],
    };
  }
}
