import { caseNamed } from '../../torture/cases';
import { check } from '../../torture/checker/check';
import type { Invariant } from '../../torture/checker/violation';
import type { HistoryRecord, OpOutcome } from '../../torture/history/records';

/**
 * The checker judges every torture run: a 0 in its table means something only if each invariant fires on
 * the history it forbids and stays quiet on its lawful twin. Each case here is a few hand-written records
 * (times in ms from the workload's start), on the `redis` case's bounds with a slack of 1000 ms.
 */
const T0 = 1_700_000_000_000;
const LEASE = 3_000;

class History {
  readonly records: HistoryRecord[] = [];
  private ops = 0;
  private readonly register = new Map<string, number>();

  constructor() {
    this.push({ t: 0, p: 'parent', type: 'run', what: 'workload-start', case: 'redis', seed: 1 });
    for (const [slot, label] of ['a0.1', 'a1.1', 'a2.1'].entries()) {
      this.push({ t: 0, p: 'parent', type: 'app', what: 'spawned', label, slot, pid: 100 + slot });
      this.push({ t: 0, p: label, type: 'proc', what: 'ready' });
    }
  }

  /** `record.t` in ms from the workload's start. */
  push(record: HistoryRecord): this {
    this.records.push({ ...record, t: T0 + record.t });
    return this;
  }

  /** An operation from `from` to `to` that took `key` with `fence`, wrote once under it and released it. */
  hold(actor: string, key: string, fence: number, from: number, to: number, options: { write?: 'accepted' | 'refused'; writeAt?: number; release?: boolean; lostAt?: number } = {}): this {
    const op = this.start(actor, 'withLock', key, from, { waitMs: 1_000 });
    this.push({ t: from, p: actor, type: 'grant', op, key, fence, digest: op, leaseMs: LEASE, expiresAt: T0 + from + LEASE, minHoldMs: 0 });
    const before = this.register.get(key) ?? 0;
    const accepted = (options.write ?? 'accepted') === 'accepted';
    if (accepted) this.register.set(key, before + 1);
    this.push({ t: options.writeAt ?? from + 1, p: actor, type: 'write', op, key, fence, accepted, read: before, before, ...(accepted ? {} : { stored: fence + 1 }) });
    if (options.lostAt !== undefined) {
      this.push({ t: options.lostAt, p: actor, type: 'ev', ev: 'lost', key, digest: op, reason: 'expired' });
      return this.end(actor, op, options.lostAt, 'lost');
    }
    this.push({ t: to, p: actor, type: 'section-end', op, key, digest: op });
    if (options.release ?? true) this.push({ t: to + 1, p: actor, type: 'ev', ev: 'released', key, digest: op, keptMs: 0 });
    return this.end(actor, op, to + 1, 'ok');
  }

  /** A read/write or permit hold from `from` to `to` (released), granted to an operation that began at `opAt`. */
  shaped(actor: string, key: string, fence: number, from: number, to: number, shape: 'read' | 'write' | 'permits', options: { permits?: number; opAt?: number } = {}): this {
    const op = this.start(actor, shape, key, options.opAt ?? from, { waitMs: 1_000 });
    this.push({ t: from, p: actor, type: 'grant', op, key, fence, digest: op, leaseMs: LEASE, expiresAt: T0 + from + LEASE, minHoldMs: 0, shape, ...(shape === 'permits' ? { permits: options.permits ?? 2 } : {}) });
    this.push({ t: to, p: actor, type: 'section-end', op, key, digest: op });
    this.push({ t: to + 1, p: actor, type: 'ev', ev: 'released', key, digest: op, keptMs: 0 });
    return this.end(actor, op, to + 1, 'ok');
  }

  /** A single attempt (tryAcquire) on `key` refused at `at`. */
  refusedTry(actor: string, key: string, at: number): this {
    const op = this.start(actor, 'tryAcquire', key, at, { waitMs: 0, single: true });
    return this.end(actor, op, at + 2, 'refused');
  }

  start(actor: string, kind: string, key: string, at: number, options: { waitMs?: number; single?: boolean; leaseMs?: number } = {}): string {
    const op = `${actor}#${++this.ops}`;
    this.push({ t: at, p: actor, type: 'op-start', op, kind, key, waitMs: options.waitMs ?? 0, leaseMs: options.leaseMs ?? LEASE, single: options.single ?? false });
    return op;
  }

  end(actor: string, op: string, at: number, outcome: OpOutcome, extra: { error?: string; option?: string } = {}): this {
    return this.push({ t: at, p: actor, type: 'op-end', op, outcome, ...extra });
  }

  sample(at: number, locks: Array<{ key: string; fence: number; holder: string }>): this {
    return this.push({ t: at + 5, p: 'parent', type: 'sample', start: T0 + at, end: T0 + at + 5, locks: locks.map((lock) => ({ ...lock, ttlMs: LEASE })), queues: [] });
  }

  /** Ends the workload and stops every application still running, cleanly. */
  finish(at: number): HistoryRecord[] {
    this.push({ t: at, p: 'parent', type: 'run', what: 'workload-end', case: 'redis', seed: 1 });
    const exited = new Set(this.records.flatMap((r) => (r.type === 'app' && r.what === 'exited' ? [r.label] : [])));
    for (const [slot, label] of ['a0.1', 'a1.1', 'a2.1'].entries()) {
      if (exited.has(label)) continue;
      this.push({ t: at + 10, p: 'parent', type: 'app', what: 'stop-asked', label, slot });
      this.push({ t: at + 20, p: 'parent', type: 'app', what: 'exited', label, slot, code: 0, signal: null });
    }
    return [...this.records].sort((x, y) => x.t - y.t);
  }
}

function violations(records: readonly HistoryRecord[]): Partial<Record<Invariant, string[]>> {
  const found: Partial<Record<Invariant, string[]>> = {};
  for (const v of check(records, caseNamed('redis')).violations) (found[v.invariant] ??= []).push(v.message);
  return found;
}

describe('torture checker', () => {
  const slack = process.env.TORTURE_SLACK_MS;
  beforeAll(() => {
    process.env.TORTURE_SLACK_MS = '1000';
  });
  afterAll(() => {
    if (slack === undefined) delete process.env.TORTURE_SLACK_MS;
    else process.env.TORTURE_SLACK_MS = slack;
  });

  it('finds nothing in a lawful history: hand-offs with rising fences, every lease released, the store emptied', () => {
    const history = new History().hold('a0.1', 'hot', 1, 100, 600).hold('a1.1', 'hot', 2, 700, 1_200).sample(300, [{ key: 'hot', fence: 1, holder: 'a0.1' }]).sample(2_000, []);
    expect(violations(history.finish(3_000))).toEqual({});
  });

  it('(a) reports two holders at once outside any failover window', () => {
    const history = new History().hold('a0.1', 'hot', 1, 100, 1_000).hold('a1.1', 'hot', 2, 500, 1_200);
    expect(violations(history.finish(3_000)).a).toEqual([expect.stringMatching(/held by a0.1 \(fence 1\) and a1.1 \(fence 2\) at once/)]);
  });

  it('(a) excuses an older holder frozen across the newer grant, but only while the register refused its writes', () => {
    const frozen = (write: 'accepted' | 'refused'): HistoryRecord[] =>
      new History()
        .push({ t: 50, p: 'parent', type: 'app', what: 'sigstop', label: 'a0.1', slot: 0 })
        .push({ t: 4_000, p: 'parent', type: 'app', what: 'sigcont', label: 'a0.1', slot: 0 })
        // The newer holder's write comes first in the register's order.
        .hold('a1.1', 'hot', 2, 3_200, 4_200)
        .hold('a0.1', 'hot', 1, 10, 4_100, { write, writeAt: 4_050, lostAt: 4_100 })
        .finish(6_000);
    expect(violations(frozen('refused')).a).toBeUndefined();
    expect(violations(frozen('accepted')).a).toEqual([expect.stringMatching(/inside a older holder frozen, but the register accepted/)]);
  });

  it('(b) reports a fence that did not rise in grant order', () => {
    const history = new History().hold('a0.1', 'hot', 5, 100, 600).hold('a1.1', 'hot', 3, 700, 1_200);
    expect(violations(history.finish(3_000)).b).toEqual([expect.stringMatching(/granted to a1.1 with fence 3 after a0.1's 5/), 'register accepted fence 3 (a1.1) after fence 5 (a0.1)']);
  });

  it('(a) lets readers share a key and N permit holders hold one, and reports a writer held with a reader and N + 1 permit holders', () => {
    const lawful = new History()
      .shaped('a0.1', 'rw', 1, 100, 900, 'read')
      .shaped('a1.1', 'rw', 2, 200, 800, 'read')
      .shaped('a2.1', 'rw', 3, 1_000, 1_500, 'write')
      .shaped('a0.1', 'sem', 4, 100, 900, 'permits')
      .shaped('a1.1', 'sem', 5, 200, 800, 'permits')
      .shaped('a2.1', 'sem', 6, 950, 1_500, 'permits');
    expect(violations(lawful.finish(4_000))).toEqual({});
    const broken = new History()
      .shaped('a0.1', 'rw', 1, 100, 900, 'read')
      .shaped('a1.1', 'rw', 2, 500, 1_200, 'write')
      .shaped('a0.1', 'sem', 4, 100, 900, 'permits')
      .shaped('a1.1', 'sem', 5, 200, 900, 'permits')
      .shaped('a2.1', 'sem', 6, 600, 1_500, 'permits');
    expect(violations(broken.finish(4_000)).a).toEqual([
      expect.stringMatching(/"rw" held by a0.1 \(fence 1, read\) and a1.1 \(fence 2, write\) at once/),
      expect.stringMatching(/"sem" held by 3 at once, 2 permits: a2.1 \(fence 6\) granted while a0.1 \(fence 4\), a1.1 \(fence 5\) still held it/),
    ]);
  });

  it('(b) on a shaped key, orders fences by what ended before an operation began, not by when holders learnt of their grants', () => {
    // Two readers at once learnt of their grants in the other order than the store made them: lawful.
    const lawful = new History().shaped('a0.1', 'rw', 2, 100, 900, 'read', { opAt: 50 }).shaped('a1.1', 'rw', 1, 150, 800, 'read', { opAt: 60 });
    expect(violations(lawful.finish(4_000))).toEqual({});
    const broken = new History().shaped('a0.1', 'rw', 5, 100, 400, 'read').shaped('a1.1', 'rw', 3, 700, 900, 'read', { opAt: 600 });
    expect(violations(broken.finish(4_000)).b).toEqual([expect.stringMatching(/"rw" granted to a1.1 \(read\) with fence 3, not above a0.1's 5 \(read\)/)]);
  });

  it('(c) on a shaped key, counts another operation waiting for it as taking it, but not the refused wait itself', () => {
    const refused = (others: boolean): HistoryRecord[] => {
      const history = new History();
      // A writer in line from 0.1 s, granted at 3.5 s: a reader's single attempt at 1 s is turned away by the line.
      if (others) history.shaped('a0.1', 'rw', 1, 3_500, 4_000, 'write', { opAt: 100 });
      const single = history.start('a1.1', 'read', 'rw', 1_000, { waitMs: 0, single: true });
      history.end('a1.1', single, 1_002, 'refused');
      return history.finish(8_000);
    };
    expect(violations(refused(true)).c).toBeUndefined();
    expect(violations(refused(false)).c).toEqual([expect.stringMatching(/a1.1 refused "rw" on a single attempt \(read\)/)]);
  });

  it('(c) reports a single attempt refused while nothing explains the key being taken, and not one refused under a holder', () => {
    const history = new History().hold('a0.1', 'hot', 1, 100, 600).refusedTry('a1.1', 'hot', 300).refusedTry('a2.1', 'hot', 5_000);
    const found = violations(history.finish(8_000)).c;
    expect(found).toEqual([expect.stringMatching(/^a2.1 refused "hot" on a single attempt/)]);
  });

  it('(d) reports a lock no grant explains past the orphan bound, and a lease never released nor reported lost', () => {
    const history = new History()
      .sample(1_000, [{ key: 'cold', fence: 9, holder: 'a2.1' }])
      .sample(2_500, [{ key: 'cold', fence: 9, holder: 'a2.1' }])
      .sample(6_000, [{ key: 'cold', fence: 9, holder: 'a2.1' }])
      .hold('a0.1', 'warm', 1, 100, 600, { release: false });
    const found = violations(history.finish(8_000)).d;
    expect(found).toEqual(
      expect.arrayContaining([expect.stringMatching(/"cold" still held in the store with fence 9 up to 3000 ms past its bound: no recorded grant \(holder a2.1\)/), expect.stringMatching(/a0.1's lease of "warm" \(fence 1\) was never released nor reported lost/)]),
    );
    expect(found).toHaveLength(2);
  });

  it("(d) allows a waiter's entry that became the owner before the waiter knew, until one orphan bound after its wait failed", () => {
    const waited = (endsAt: number): HistoryRecord[] => {
      const history = new History();
      const op = history.start('a1.1', 'withLock', 'queued', 500, { waitMs: 5_000 });
      history.end('a1.1', op, endsAt, 'store', { error: 'LockStoreUnavailableError' });
      for (let t = 1_000; t <= 6_000; t += 500) history.sample(t, [{ key: 'queued', fence: 4, holder: 'a1.1' }]);
      return history.finish(9_000);
    };
    // The wait ran until 5.5 s: the entry may stand until 7.5 s (one command timeout plus slack later).
    expect(violations(waited(5_500)).d).toBeUndefined();
    // Ended at 2 s, it should have been cleaned up by 4 s: seen until 6 s.
    expect(violations(waited(2_000)).d).toEqual([expect.stringMatching(/"queued" still held in the store with fence 4 up to 2000 ms past its bound/)]);
  });

  it('(e) reports a holder frozen past its deadline that learnt its loss long after it ran again', () => {
    const history = new History()
      .push({ t: 50, p: 'parent', type: 'app', what: 'sigstop', label: 'a0.1', slot: 0 })
      .push({ t: 4_000, p: 'parent', type: 'app', what: 'sigcont', label: 'a0.1', slot: 0 })
      .hold('a0.1', 'hot', 1, 10, 7_000, { write: 'refused', writeAt: 4_050, lostAt: 7_000 })
      .hold('a1.1', 'hot', 2, 3_200, 3_600);
    expect(violations(history.finish(9_000)).e).toEqual([expect.stringMatching(/a0.1 \(fence 1\) learnt its loss of "hot" 3990 ms after its deadline/)]);
  });

  it('(e) counts a holder stopped again the moment it was resumed as frozen until it really runs (two app-pause faults back to back)', () => {
    // cluster-fair-replicas seed 3: a pause past the lease began at the grant, the next one at its very end.
    const frozenTwice = (secondPauseAt: number): HistoryRecord[] =>
      new History()
        .push({ t: 50, p: 'parent', type: 'app', what: 'sigstop', label: 'a0.1', slot: 0 })
        .push({ t: 4_000, p: 'parent', type: 'app', what: 'sigcont', label: 'a0.1', slot: 0 })
        .push({ t: secondPauseAt, p: 'parent', type: 'app', what: 'sigstop', label: 'a0.1', slot: 0 })
        .push({ t: 7_000, p: 'parent', type: 'app', what: 'sigcont', label: 'a0.1', slot: 0 })
        .hold('a0.1', 'hot', 1, 10, 7_001, { write: 'refused', writeAt: 7_001, lostAt: 7_001 })
        .hold('a1.1', 'hot', 2, 3_200, 3_600)
        .finish(9_000);
    expect(violations(frozenTwice(4_000)).e).toBeUndefined();
    // Running for more than its slack (1 s) in between, it should have learnt its loss then.
    expect(violations(frozenTwice(5_500)).e).toEqual([expect.stringMatching(/a0.1 \(fence 1\) learnt its loss of "hot" 3991 ms after its deadline/)]);
  });

  it('(f) reports an unhandled rejection and a process that exited badly when asked to stop', () => {
    const records = new History().push({ t: 200, p: 'a1.1', type: 'unhandled', error: 'Error: boom' }).finish(3_000);
    const crashed = records.map((r) => (r.type === 'app' && r.what === 'exited' && r.label === 'a2.1' ? { ...r, code: 1 } : r));
    expect(violations(crashed).f).toEqual([expect.stringMatching(/a1.1: unhandled Error: boom/), expect.stringMatching(/a2.1 exited with code 1/)]);
  });

  it('(f) reports a process that crashed on its own, and ends its holds at its death: no lease counted past it', () => {
    const history = new History();
    const op = history.start('a2.1', 'withLock', 'hot', 100, { waitMs: 1_000 });
    history.push({ t: 100, p: 'a2.1', type: 'grant', op, key: 'hot', fence: 1, digest: op, leaseMs: LEASE, expiresAt: T0 + 100 + LEASE, minHoldMs: 0 });
    history.push({ t: 500, p: 'parent', type: 'app', what: 'exited', label: 'a2.1', slot: 2, code: null, signal: 'SIGABRT' });
    // The next holder comes after the dead one's lease: no overlap, no leak.
    history.hold('a0.1', 'hot', 2, 4_000, 4_500);
    const found = violations(history.finish(7_000));
    expect(found).toEqual({ f: [expect.stringMatching(/a2.1 exited with code null signal SIGABRT/)] });
  });

  it('(f) on a deployment that must be refused at startup, reports an application that started, and none refused as it must be', () => {
    const nowait = caseNamed('redis-replicas-nowait');
    const refused = 'LockConfigError: Invalid lock option "replicas" = 1: expected a server that takes WAIT';
    const startup = (started: readonly string[]): HistoryRecord[] =>
      ['a0.1', 'a1.1', 'a2.1'].flatMap((label, slot): HistoryRecord[] => [
        { t: T0, p: 'parent', type: 'app', what: 'spawned', label, slot, pid: 100 + slot },
        ...(started.includes(label)
          ? ([{ t: T0 + 50, p: label, type: 'proc', what: 'ready' }, { t: T0 + 60, p: 'parent', type: 'app', what: 'sigkill', label, slot }] as HistoryRecord[])
          : ([{ t: T0 + 50, p: label, type: 'proc', what: 'refused', error: refused }] as HistoryRecord[])),
        { t: T0 + 70, p: 'parent', type: 'app', what: 'exited', label, slot, code: started.includes(label) ? null : 78, signal: started.includes(label) ? 'SIGKILL' : null },
      ]);
    const messages = (records: HistoryRecord[], def = nowait) => check(records, def).violations.map((v) => `(${v.invariant}) ${v.message}`);
    expect(messages(startup([]))).toEqual([]);
    expect(messages(startup(['a1.1']))).toEqual([expect.stringMatching(/^\(f\) a1.1 started, where its options must be refused at startup/)]);
    // Anywhere else a refusal at startup is a failure of its own.
    expect(messages(startup([]), caseNamed('redis'))).toEqual(['a0.1', 'a1.1', 'a2.1'].map((label) => `(f) ${label} was refused at startup: ${refused}`));
  });

  it('(g) reports one process refusing a lease length it had been granted', () => {
    const history = new History().hold('a0.1', 'hot', 1, 100, 600);
    const op = history.start('a0.1', 'withLock', 'cold', 1_000);
    history.end('a0.1', op, 1_010, 'config', { error: 'LockConfigError: leaseMs', option: 'leaseMs' });
    expect(violations(history.finish(3_000)).g).toEqual([expect.stringMatching(/a0.1 refused leaseMs=3000 \(LockConfigError\) after accepting it/)]);
  });

  // Waits end well after the applications' start, when their subscriber connections may still be coming up.
  it('(h) reports a quiet wait that woke by backoff like a poll, and not one woken by notifications', () => {
    const wait = (backoff: number, notification: number): HistoryRecord[] =>
      new History().push({ t: 6_000, p: 'a1.1', type: 'ev', ev: 'acquired', key: 'hot', waitedMs: 600, attempts: backoff + notification + 1, wakeUps: { notification, backoff, expiry: 0, deadline: 0 } }).finish(8_000);
    expect(violations(wait(15, 0)).h).toEqual([expect.stringMatching(/a1.1 waited 600 ms for "hot" \(acquired\) and woke 15× by backoff/)]);
    expect(violations(wait(1, 3)).h).toBeUndefined();
  });
});
