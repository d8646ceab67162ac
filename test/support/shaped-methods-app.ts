import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, DistributedLockModule, LockService, type LockModuleOptions } from '../../lib/index';

@Injectable()
class Reports {
  constructor(readonly locks: LockService) {}

  @DistributedLock({ key: 'report:{id}', mode: 'read' })
  async read(id: string): Promise<string | undefined> {
    return this.locks.current()?.key;
  }

  @DistributedLock({ key: 'report:{id}', mode: 'write' })
  async rebuild(id: string): Promise<number> {
    return this.locks.current()!.fencingToken;
  }

  @DistributedLock({ key: 'partner', permits: 2 })
  async quote(id: string): Promise<string> {
    return `quote ${id}`;
  }
}

/**
 * Starts an application on `options` whose @DistributedLock methods read, write and take permits (a store
 * without shapes refuses it at startup with LockConfigError), runs each of them, then `afterRuns` (say, a
 * look at what the store kept of them) before it closes the application.
 */
export async function runShapedMethods(options: LockModuleOptions, afterRuns?: () => Promise<void>): Promise<void> {
  const moduleRef = await Test.createTestingModule({ imports: [DistributedLockModule.forRoot(options)], providers: [Reports] }).compile();
  const nest = await moduleRef.createNestApplication({ logger: false }).init();
  try {
    const reports = nest.get(Reports);
    expect(await Promise.all([reports.read('1'), reports.read('1')])).toEqual(['report:1', 'report:1']);
    expect(await reports.rebuild('1')).toBeGreaterThan(0);
    expect(await Promise.all([reports.quote('a'), reports.quote('b'), reports.quote('c')])).toEqual(['quote a', 'quote b', 'quote c']);
    await afterRuns?.();
  } finally {
    await nest.close();
  }
}
