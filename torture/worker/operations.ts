import {
  LeaseLostError,
  LockConfigError,
  LockNotAcquiredError,
  LockStoreUnavailableError,
  StaleFencingTokenError,
  trackTransaction,
  type Lease,
} from '../../lib/index';
import type { OpOutcome } from '../history/records';
import type { FencedRegister, PostgresFencedRegister } from './fenced-register';
import { CRON_MIN_HOLD_MS } from './locked-jobs';
import { isSingleAttempt, SHARED_PERMITS, type OpPlan } from './op-plan';
import { holdShared, recordGrant, recordSectionEnd, sleep, work, type GrantShape, type SectionContext } from './section';
import { describe, type Recorder, type WorkerApp } from './worker-app';

export interface OpRun {
  readonly app: WorkerApp;
  readonly register: FencedRegister;
  /** Set on the PostgreSQL case: `transaction` operations write through it inside their transaction. */
  readonly transactions?: PostgresFencedRegister;
  readonly record: Recorder;
  readonly op: string;
  readonly plan: OpPlan;
}

class Refused extends Error {}
const ABORTED = 'torture: wait aborted';

/** Runs one operation and records its start and its outcome; never throws. */
export async function runOperation(run: OpRun): Promise<void> {
  const { plan, record, op } = run;
  const single = isSingleAttempt(plan.kind) || plan.waitMs === 0;
  record({ type: 'op-start', op, kind: plan.kind, key: plan.key, waitMs: plan.waitMs, leaseMs: plan.leaseMs, single, ...(plan.kind === 'multi-hold' ? { key2: plan.key2 } : {}) });
  let outcome: { outcome: OpOutcome; error?: string; option?: string } = { outcome: 'ok' };
  try {
    await perform(run);
  } catch (error) {
    outcome = classify(error, run.app);
  }
  record({ type: 'op-end', op, ...outcome });
}

async function perform(run: OpRun): Promise<void> {
  const { app, plan, op } = run;
  const ctx: SectionContext = { register: run.register, record: run.record, op, rmwGapMs: plan.rmwGapMs };
  const options = { waitMs: plan.waitMs, leaseMs: plan.leaseMs, name: op };
  const scoped = async (lease: Lease, holdMs = plan.holdMs, minHoldMs = 0): Promise<void> => {
    recordGrant(ctx, lease, minHoldMs);
    const why = await work(ctx, lease, holdMs, plan.writes, true);
    recordSectionEnd(ctx, lease, why);
  };
  switch (plan.kind) {
    case 'with-lock':
    case 'long-hold':
      return app.locks.withLock(plan.key, options, async (lease) => {
        recordGrant(ctx, lease);
        let why = await work(ctx, lease, plan.holdMs, plan.writes, true);
        if (plan.join && why === 'done') {
          // A re-entrant call on the same key in the same chain joins the lease instead of waiting for itself.
          why = await app.locks.withLock(plan.key, { reentrant: true }, async (joined) => {
            run.record({ type: 'join', op, key: joined.key, fence: joined.fencingToken, digest: joined.tokenDigest });
            return work(ctx, joined, 5, 1, true);
          });
        }
        recordSectionEnd(ctx, lease, why);
      });
    case 'decorated':
      await app.jobs.run(plan.key, async (lease) => {
        recordGrant(ctx, lease);
        let why = await work(ctx, lease, plan.holdMs, plan.writes, true);
        if (plan.join && why === 'done') {
          await app.jobs.run(plan.key, async (joined) => {
            run.record({ type: 'join', op, key: joined.key, fence: joined.fencingToken, digest: joined.tokenDigest });
            why = await work(ctx, joined, 5, 1, true);
          });
        }
        recordSectionEnd(ctx, lease, why);
      });
      return;
    case 'decorated-skip':
      if ((await app.jobs.tick(plan.key, (lease) => scoped(lease))) === undefined) throw new Refused();
      return;
    case 'cron':
      if ((await app.jobs.cron(plan.key, (lease) => scoped(lease, plan.holdMs, CRON_MIN_HOLD_MS))) === undefined) throw new Refused();
      return;
    case 'acquire-using': {
      await using lease = await app.locks.acquire(plan.key, options);
      recordGrant(ctx, lease);
      let why = await work(ctx, lease, plan.holdMs, plan.writes, false);
      if (plan.extendMs !== undefined && why === 'done') {
        let ok = true;
        await lease.extend(plan.extendMs).catch(() => (ok = false));
        run.record({ type: 'extend', op, digest: lease.tokenDigest, ms: plan.extendMs, ok, expiresAt: lease.expiresAt });
        if (ok) why = await work(ctx, lease, 5, 1, false);
      }
      recordSectionEnd(ctx, lease, why);
      return;
    }
    case 'try-acquire': {
      const lease = await app.locks.tryAcquire(plan.key, { leaseMs: plan.leaseMs, name: op });
      if (!lease) throw new Refused();
      return manual(ctx, lease, plan.holdMs, plan.writes);
    }
    case 'single-attempt':
    case 'short-wait':
      return manual(ctx, await app.locks.acquire(plan.key, options), plan.holdMs, plan.writes);
    case 'min-hold':
      return manual(ctx, await app.locks.acquire(plan.key, { ...options, minHoldMs: plan.minHoldMs }), 5, 1, plan.minHoldMs);
    case 'aborted-wait': {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(ABORTED)), plan.abortAfterMs);
      try {
        const lease = await app.locks.acquire(plan.key, { ...options, signal: controller.signal });
        clearTimeout(timer);
        return manual(ctx, lease, 5, 1);
      } finally {
        clearTimeout(timer);
      }
    }
    case 'multi-hold': {
      // One order for every process, so that two multi-holds cannot wait for each other.
      const [first, second] = [plan.key, plan.key2].sort() as [string, string];
      return app.locks.withLock(first, options, async (outer) => {
        recordGrant(ctx, outer);
        let why = 'second key not acquired';
        try {
          await app.locks.withLock(second, options, async (inner) => {
            recordGrant(ctx, inner);
            const [a, b] = await Promise.all([work(ctx, outer, plan.holdMs, plan.writes, true), work(ctx, inner, plan.holdMs, plan.writes, true)]);
            recordSectionEnd(ctx, inner, b);
            why = a;
          });
        } finally {
          recordSectionEnd(ctx, outer, why);
        }
      });
    }
    case 'pair':
      return pair(run, ctx);
    case 'transaction':
      return transaction(run, ctx);
    case 'read':
    case 'write':
      return shaped(run, ctx, { mode: plan.kind }, { shape: plan.kind });
    case 'permits':
      return shaped(run, ctx, { permits: SHARED_PERMITS }, { shape: 'permits', permits: SHARED_PERMITS });
  }
}

/**
 * A read/write lock or a permit, waiting in the key's line of shaped waiters with `fair: true` (one attempt
 * when `waitMs` is 0: `LockNotAcquiredError` when it is turned away). A writer's section writes the
 * register (writers exclude each other, so its fence judges them); a reader's or permit holder's holds.
 */
async function shaped(run: OpRun, ctx: SectionContext, shape: { mode: 'read' | 'write' } | { permits: number }, recorded: GrantShape): Promise<void> {
  const { app, plan } = run;
  await app.locks.withLock(plan.key, { waitMs: plan.waitMs, leaseMs: plan.leaseMs, name: run.op, ...shape }, async (lease) => {
    recordGrant(ctx, lease, 0, recorded);
    const why = recorded.shape === 'write' ? await work(ctx, lease, plan.holdMs, plan.writes, true) : await holdShared(lease, plan.holdMs);
    recordSectionEnd(ctx, lease, why);
  });
}

/** A manual lease: the section, then release(), whose LeaseLostError is the loss made visible. */
async function manual(ctx: SectionContext, lease: Lease, holdMs: number, writes: number, minHoldMs = 0): Promise<void> {
  recordGrant(ctx, lease, minHoldMs);
  recordSectionEnd(ctx, lease, await work(ctx, lease, holdMs, writes, false));
  await lease.release();
}

/** One call holds the key while a second call of the same process waits in line for it. */
async function pair(run: OpRun, ctx: SectionContext): Promise<void> {
  const { app, plan } = run;
  const second: OpRun = { ...run, op: `${run.op}w`, plan: { ...plan, kind: 'acquire-using', holdMs: 20, writes: 1, extendMs: undefined } };
  const waiting = (async () => {
    await sleep(30);
    await runOperation(second);
  })();
  await app.locks.withLock(plan.key, { waitMs: 1_000, leaseMs: plan.leaseMs, name: run.op }, async (lease) => {
    recordGrant(ctx, lease);
    recordSectionEnd(ctx, lease, await work(ctx, lease, plan.holdMs, plan.writes, true));
  });
  await waiting;
}

/**
 * Release after commit: the locked call runs inside a tracked transaction on the register's database,
 * writes through it, and its lease is released only once COMMIT is done. The holder interval ends after
 * COMMIT (that is when the writes become visible), before the release.
 */
async function transaction(run: OpRun, ctx: SectionContext): Promise<void> {
  const { app, plan } = run;
  const register = run.transactions!;
  const client = await register.connect();
  let lease: Lease | undefined;
  try {
    await trackTransaction(
      async (body: (tx: typeof client) => Promise<void>) => {
        await client.query('BEGIN');
        try {
          await body(client);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          if (lease) run.record({ type: 'section-end', op: run.op, key: lease.key, digest: lease.tokenDigest, why: 'rolled-back', rolledBack: true });
          throw error;
        }
        if (lease) recordSectionEnd(ctx, lease, 'committed');
      },
      (tx) =>
        app.locks.withLock(plan.key, { waitMs: plan.waitMs, leaseMs: plan.leaseMs, name: run.op }, async (held) => {
          lease = held;
          recordGrant(ctx, held);
          await work(ctx, held, plan.holdMs, plan.writes, true, tx);
          if (plan.join) {
            // A later locked call on the same key inside the transaction runs under its lease.
            await app.locks.withLock(plan.key, { reentrant: true }, async (joined) => {
              run.record({ type: 'join', op: run.op, key: joined.key, fence: joined.fencingToken, digest: joined.tokenDigest });
              await work(ctx, joined, 5, 1, true, tx);
            });
          }
        }),
    );
  } finally {
    client.release();
  }
}

function classify(error: unknown, app: WorkerApp): { outcome: OpOutcome; error?: string; option?: string } {
  // `await using` whose block threw too: the disposal's error is the one that says what happened to the lease.
  if (error && typeof error === 'object' && 'suppressed' in error && 'error' in error) return classify((error as { error: unknown }).error, app);
  if (error instanceof Refused || error instanceof LockNotAcquiredError) return { outcome: 'refused' };
  if (error instanceof LeaseLostError) return { outcome: 'lost', error: error.reason };
  if (error instanceof LockConfigError) return { outcome: 'config', option: error.option, error: error.message };
  if (error instanceof StaleFencingTokenError) return { outcome: 'stale' };
  if (error instanceof Error && error.message === ABORTED) return { outcome: 'aborted' };
  if (app.closing) return { outcome: 'shutdown', error: describe(error) };
  if (error instanceof LockStoreUnavailableError) return { outcome: 'store', error: describe(error) };
  return { outcome: 'unexpected', error: describe(error) };
}
