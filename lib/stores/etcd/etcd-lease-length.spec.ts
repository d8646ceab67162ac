import { LockConfigError } from '../../errors/lock-config.error';
import { EtcdLeaseLength, remainingMs, ttlSecondsFor } from './etcd-lease-length';

describe('etcd lease lengths', () => {
  it('rounds leaseMs up to whole seconds, never below one, so the etcd lease outlasts the local deadline', () => {
    expect([1, 999, 1_000, 1_001, 2_500, 30_000].map(ttlSecondsFor)).toEqual([1, 1, 1, 2, 3, 30]);
  });

  it('reports at most what etcd has left (whole seconds, rounded down by etcd) and at most the lease asked for', () => {
    expect(remainingMs(9, 10_000)).toBe(9_999);
    expect(remainingMs(9, 40)).toBe(40);
    expect(remainingMs(-1, 10_000)).toBe(0);
  });

  it('refuses, under the default policy, a lease below a second, and one the server stretches beyond its rounding', () => {
    const lengths = new EtcdLeaseLength('reject', '10.0.0.1:2379');
    expect(() => lengths.ttlFor(999)).toThrow(LockConfigError);
    expect(lengths.ttlFor(1_000)).toBe(1);
    // The server answered a 1 s request with 2 s: its minimum.
    expect(() => lengths.granted(1_000, 1, 2)).toThrow(/at least 2000 ms .*10\.0\.0\.1:2379/);
    expect(lengths.holdTtlFor(40)).toBe(1);
  });

  it('judges every grant by itself: a refusal teaches nothing that changes the answer for another value', () => {
    const lengths = new EtcdLeaseLength('reject', '10.0.0.1:2379');
    expect(() => lengths.granted(1_000, 1, 2)).toThrow(LockConfigError);
    // 1500 ms rounds up to the same 2 s: accepted before the refusal above and after it alike.
    expect(lengths.ttlFor(1_500)).toBe(2);
    expect(() => lengths.granted(1_500, 2, 2)).not.toThrow();
    expect(() => lengths.granted(1_000, 1, 2)).toThrow(LockConfigError);
  });

  it("grants the longer etcd lease under 'round-up'", () => {
    const lengths = new EtcdLeaseLength('round-up', '10.0.0.1:2379');
    expect(lengths.ttlFor(30)).toBe(1);
    expect(() => lengths.granted(30, 1, 2)).not.toThrow();
  });
});
