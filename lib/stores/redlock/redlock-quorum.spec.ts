import { quorumOf, renewalByVote, ttlUntilQuorumFree } from './redlock-quorum';
import { oncePerRelease } from './redlock-release-watch';

const servers = ['a:1', 'b:2', 'c:3'];

describe('Redlock votes', () => {
  it('needs a majority: 2 of 3, 3 of 5', () => {
    expect([quorumOf(3), quorumOf(5), quorumOf(7)]).toEqual([2, 3, 4]);
  });

  it('renews a lease a majority confirms, even with one master down', () => {
    expect(renewalByVote([true, true, new Error('down')], servers)).toBe(true);
  });

  it('counts a lease lost only when a majority says it is not ours', () => {
    expect(renewalByVote([false, false, true], servers)).toBe(false);
    const unknown = renewalByVote([false, true, new Error('unreachable')], servers);
    expect(unknown).toBeInstanceOf(Error);
    expect((unknown as Error).message).toContain('c:3: unreachable');
  });

  it('reports as remaining lease the time until a majority of masters is free', () => {
    // 3 masters, all denying: two keys must run out, the second one decides.
    expect(ttlUntilQuorumFree([900, 100, 500], 3)).toBe(500);
    expect(ttlUntilQuorumFree([900, -1, 500], 3)).toBe(-1);
    // 1 denial, the rest unanswered: its expiry is the best estimate.
    expect(ttlUntilQuorumFree([700], 3)).toBe(700);
  });
});

describe('Release announcements of several masters', () => {
  it('wake a listener once per release that every master announced', () => {
    let woken = 0;
    const hear = oncePerRelease(3, () => woken++);
    for (const master of [0, 2, 1]) hear(master);
    expect(woken).toBe(1);
    for (const master of [1, 0, 2]) hear(master);
    expect(woken).toBe(2);
  });

  it('wake it again when a master announces a second release before the others announced the first', () => {
    let woken = 0;
    const hear = oncePerRelease(3, () => woken++);
    hear(0);
    hear(1);
    // Master 2 missed the first release; master 0 announces the next one.
    hear(0);
    expect(woken).toBe(2);
  });
});
