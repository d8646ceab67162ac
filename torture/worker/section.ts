import { assertLeasesHeld, type Lease } from '../../lib/index';
import type { FencedRegister, Queryable } from './fenced-register';
import type { Recorder } from './worker-app';

/** What a protected section needs: where it writes, how it records, and its operation's id. */
export interface SectionContext {
  readonly register: FencedRegister;
  readonly record: Recorder;
  readonly op: string;
  /** The pause between a section's read and its write. */
  readonly rmwGapMs: number;
}

/** A read/write or semaphore hold's shape, as its grant record carries it (a plain grant carries none). */
export interface GrantShape {
  readonly shape: 'read' | 'write' | 'permits';
  readonly permits?: number;
}

/** The holder interval begins: recorded as the section's first step, after the grant reached this process. */
export function recordGrant(ctx: SectionContext, lease: Lease, minHoldMs = 0, shape?: GrantShape): void {
  ctx.record({
    type: 'grant',
    op: ctx.op,
    key: lease.key,
    fence: lease.fencingToken,
    digest: lease.tokenDigest,
    leaseMs: lease.leaseMs,
    expiresAt: lease.expiresAt,
    minHoldMs,
    ...shape,
  });
}

/**
 * A reader's or permit holder's section: it holds the key for `holdMs` and writes nothing (several hold at
 * once, so the register's one fence cannot judge them: the checker counts the holders instead). Ends at
 * once when the lease is lost.
 */
export async function holdShared(lease: Lease, holdMs: number): Promise<string> {
  if (!stillHeld(lease, true)) return 'lost';
  await sleep(holdMs, lease.signal);
  return stillHeld(lease, true) ? 'done' : 'lost';
}

/** The holder interval ends: recorded before the release is even sent, so it errs early. */
export function recordSectionEnd(ctx: SectionContext, lease: Lease, why = 'done'): void {
  ctx.record({ type: 'section-end', op: ctx.op, key: lease.key, digest: lease.tokenDigest, why });
}

/**
 * A careful holder's check before each write: the lease's signal, its local expiry (a process that was
 * frozen past it learns nothing from a timer until the timer runs), and, inside a locked scope, the
 * library's own `assertLeasesHeld` (which also catches a deadline no timer has seen yet).
 */
export function stillHeld(lease: Lease, scoped: boolean): boolean {
  if (lease.signal.aborted || !lease.held || Date.now() >= lease.expiresAt) return false;
  if (!scoped) return true;
  try {
    assertLeasesHeld();
    return true;
  } catch {
    return false;
  }
}

/**
 * `writes` read-modify-write steps on the register, spread over `holdMs`. Stops at the first sign that
 * the lease is gone (and says so in the section's end). Resolves with how the section ended.
 */
export async function work(ctx: SectionContext, lease: Lease, holdMs: number, writes: number, scoped: boolean, via?: Queryable): Promise<string> {
  const pause = holdMs / Math.max(1, writes);
  for (let i = 0; i < writes; i++) {
    if (!stillHeld(lease, scoped)) return 'lost';
    const read = await ctx.register.read(lease.key, lease.fencingToken, via);
    if (read === undefined) {
      // A newer holder has been at the register: this lease is gone, whatever the library says yet.
      ctx.record({ type: 'write', op: ctx.op, key: lease.key, fence: lease.fencingToken, read: -1, accepted: false, before: -1, phase: 'read' });
      return 'fenced';
    }
    await sleep(ctx.rmwGapMs);
    if (!stillHeld(lease, scoped)) return 'lost';
    const result = await ctx.register.write(lease.key, lease.fencingToken, read + 1, via);
    ctx.record({ type: 'write', op: ctx.op, key: lease.key, fence: lease.fencingToken, read, ...result, ...(via ? { tx: true } : {}) });
    await sleep(pause, lease.signal);
  }
  return stillHeld(lease, scoped) ? 'done' : 'lost';
}

/** A timer that an abort ends early (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
