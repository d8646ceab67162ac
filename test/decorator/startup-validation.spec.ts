import { Injectable, type Type } from '@nestjs/common';
import { Observable, of } from 'rxjs';
import { DistributedLock, LockConfigError } from '../../lib/index';
import { moduleStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';
import { redisLock, startLockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);

/** The LockConfigError an application with `provider` fails to start with. */
async function startupError(provider: Type<unknown>): Promise<LockConfigError> {
  const error = await moduleStartError(redisLock(PREFIX), { providers: [provider] });
  expect(error).toBeInstanceOf(LockConfigError);
  return error as LockConfigError;
}

@Injectable()
class SyncTotals {
  // @ts-expect-error: the decorator's type already requires a promise-returning method.
  @DistributedLock('totals')
  sum(a: number, b: number): number {
    return a + b;
  }
}

@Injectable()
class StreamingReport {
  // @ts-expect-error: an Observable is not a Promise.
  @DistributedLock('report')
  rows(): Observable<number> {
    return of(1);
  }
}

@Injectable()
class GeneratorJob {
  // @ts-expect-error: a generator returns an iterator.
  @DistributedLock('gen')
  *batches(): Generator<number> {
    yield 1;
  }
}

@Injectable()
class UntypedSync {
  calls = 0;

  // Not async and not annotated: nothing at startup can tell, so each call checks what it got back.
  // @ts-expect-error: TypeScript infers `number`, which the decorator's type already rejects.
  @DistributedLock('untyped')
  legacy() {
    this.calls++;
    return 42;
  }
}

@Injectable()
class TypoInOptions {
  @DistributedLock({ key: 'k', waitMS: 10 } as never)
  async run(): Promise<void> {}
}

@Injectable()
class NegativeWait {
  @DistributedLock('k', { waitMs: -1 })
  async run(): Promise<void> {}
}

@Injectable()
class TinyLease {
  @DistributedLock('k', { leaseMs: 5 })
  async run(): Promise<void> {}
}

@Injectable()
class FractionalHold {
  @DistributedLock('k', { minHoldMs: 1.5 })
  async run(): Promise<void> {}
}

@Injectable()
class UnknownPolicy {
  @DistributedLock('k', { onLocked: 'ignore' as never })
  async run(): Promise<void> {}
}

@Injectable()
class MisspelledMode {
  @DistributedLock('k', { mode: 'reed' as 'read' })
  async run(): Promise<void> {}
}

@Injectable()
class NoPermits {
  @DistributedLock({ key: 'k', permits: 0 })
  async run(): Promise<void> {}
}

@Injectable()
class ModeAndPermits {
  @DistributedLock({ key: 'k', mode: 'read', permits: 2 })
  async run(): Promise<void> {}
}

@Injectable()
class SharedKeys {
  @DistributedLock({ keys: ['a', 'b'], mode: 'read' as never })
  async run(): Promise<void> {}
}

describe('@DistributedLock problems are startup errors naming class and method', () => {
  it.each([
    [SyncTotals, /SyncTotals\.sum.*sync method declared to return Number.*async/],
    [StreamingReport, /StreamingReport\.rows.*declared to return Observable/],
    [GeneratorJob, /GeneratorJob\.batches.*generator method/],
  ])('rejects a method that does not return a promise: %p', async (provider, message) => {
    expect((await startupError(provider)).message).toMatch(message);
  });

  it.each([
    [TypoInOptions, /"waitMS of @DistributedLock on TypoInOptions\.run".*no such option/],
    [NegativeWait, /"waitMs of @DistributedLock on NegativeWait\.run" = -1/],
    [TinyLease, /"leaseMs of @DistributedLock on TinyLease\.run" = 5/],
    [FractionalHold, /"minHoldMs of @DistributedLock on FractionalHold\.run" = 1\.5/],
    [UnknownPolicy, /"onLocked of @DistributedLock on UnknownPolicy\.run" = "ignore"/],
    [MisspelledMode, /"mode of @DistributedLock on MisspelledMode\.run" = "reed": expected 'read' or 'write'/],
    [NoPermits, /"permits of @DistributedLock on NoPermits\.run" = 0: expected a whole number of permits, at least 1/],
    [ModeAndPermits, /"mode of @DistributedLock on ModeAndPermits\.run".*not both/],
    [SharedKeys, /"mode of @DistributedLock on SharedKeys\.run" = "read".*a single key/],
  ])('rejects invalid options: %p', async (provider, message) => {
    expect((await startupError(provider)).message).toMatch(message);
  });

  it('fails a call whose method turned out to return a plain value (undecidable at startup)', async () => {
    const app = await startLockedApp({ lock: redisLock(PREFIX), providers: [UntypedSync] });
    try {
      const service = app.get(UntypedSync);
      const call = (service.legacy as () => unknown).call(service);
      await expect(call).rejects.toThrow(/UntypedSync\.legacy.*returned number.*async/);
      // Once a call has shown the method is sync, later calls are refused before its body runs again.
      const again = (service.legacy as () => unknown).call(service);
      await expect(again).rejects.toThrow(/UntypedSync\.legacy.*returned number.*async/);
      expect(service.calls).toBe(1);
    } finally {
      await app.close();
    }
  });
});
