import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, LockEvents, LockService, type LockModuleOptions } from '../../lib/index';
import { lockedJobsClass, type LockedJobs } from './locked-jobs';

/** What a record of the history is given: the fields of one line. */
export type Recorder = (record: Record<string, unknown> & { type: string }) => void;

/** One Nest application of an application process: a process closes it and opens a new one mid-run. */
export interface WorkerApp {
  readonly locks: LockService;
  readonly jobs: LockedJobs;
  /** Set once `close()` began: failures of calls still running are the shutdown's. */
  closing: boolean;
  close(): Promise<void>;
}

/**
 * Opens the application as a user's would be (NestFactory, DistributedLockModule.forRoot, a provider with
 * decorated methods) and records every lock event it emits: grants and refusals with their wake-ups,
 * renewals, losses, releases.
 */
export async function openWorkerApp(options: LockModuleOptions, decoratedLeaseMs: number, record: Recorder): Promise<WorkerApp> {
  const Jobs = lockedJobsClass(decoratedLeaseMs);

  @Module({ imports: [DistributedLockModule.forRoot(options)], providers: [Jobs] })
  class TortureAppModule {}

  const app: INestApplicationContext = await NestFactory.createApplicationContext(TortureAppModule, {
    logger: false,
    // A module that refuses its options rejects here (Nest would otherwise exit the process, saying nothing).
    abortOnError: false,
  });
  recordEvents(app.get(LockEvents), record);
  const opened: WorkerApp = {
    locks: app.get(LockService),
    jobs: app.get(Jobs),
    closing: false,
    close: async () => {
      opened.closing = true;
      await app.close();
    },
  };
  return opened;
}

function recordEvents(events: LockEvents, record: Recorder): void {
  events.on('acquired', (e) =>
    record({ type: 'ev', ev: 'acquired', key: e.key, fence: e.fencingToken, digest: e.tokenDigest, waitedMs: e.waitedMs, attempts: e.attempts, wakeUps: e.wakeUps }),
  );
  events.on('not-acquired', (e) =>
    record({ type: 'ev', ev: 'not-acquired', key: e.key, reason: e.reason, waitedMs: e.waitedMs, attempts: e.attempts, wakeUps: e.wakeUps }),
  );
  events.on('store-unavailable', (e) =>
    record({ type: 'ev', ev: 'store-unavailable', key: e.key, waitedMs: e.waitedMs, attempts: e.attempts, wakeUps: e.wakeUps, error: describe(e.error) }),
  );
  events.on('renewed', (e) => record({ type: 'ev', ev: 'renewed', key: e.key, digest: e.tokenDigest, expiresAt: e.expiresAt }));
  events.on('renew-failed', (e) => record({ type: 'ev', ev: 'renew-failed', key: e.key, digest: e.tokenDigest, error: describe(e.error) }));
  events.on('lost', (e) => record({ type: 'ev', ev: 'lost', key: e.key, fence: e.fencingToken, digest: e.tokenDigest, reason: e.reason, heldMs: e.heldMs }));
  events.on('released', (e) => record({ type: 'ev', ev: 'released', key: e.key, digest: e.tokenDigest, heldMs: e.heldMs, keptMs: e.keptMs }));
  events.on('release-failed', (e) => record({ type: 'ev', ev: 'release-failed', key: e.key, digest: e.tokenDigest, error: describe(e.error) }));
  events.on('deferred', (e) => record({ type: 'ev', ev: 'deferred', key: e.key, digest: e.tokenDigest }));
}

export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` <- ${error.cause.message}` : '';
  return `${error.name}: ${error.message}${cause}`.slice(0, 400);
}
