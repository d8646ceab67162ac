import type { TortureCase } from '../cases';
import type { Bounds } from './bounds';
import { meets } from './intervals';
import type { Model } from './model';
import type { Violation } from './violation';
import { failoverWindows } from './windows';

/**
 * (e, the converse) No false loss: a holder told `rejected` (the store said the token is not ours) while a
 * sample that began after it learnt so still found the key in the store under its own fencing token, so
 * that nobody else had it. Not judged inside failover windows, where the sampler and the renewal may have
 * read two different nodes.
 */
export function checkFalseLoss(model: Model, def: TortureCase, bounds: Bounds): Violation[] {
  const windows = failoverWindows(model, def, bounds);
  const violations: Violation[] = [];
  for (const h of model.holds) {
    if (h.lossReason !== 'rejected' || h.lossAt === undefined) continue;
    if (meets(windows, { from: h.lossAt - bounds.leaseMaxMs, to: h.lossAt })) continue;
    const lossAt = h.lossAt;
    const seen = model.samples.find((s) => s.start > lossAt && s.locks.some((lock) => lock.key === h.key && lock.fence === h.fence));
    if (!seen) continue;
    const lock = seen.locks.find((l) => l.key === h.key && l.fence === h.fence)!;
    violations.push({
      invariant: 'e',
      key: h.key,
      at: lossAt,
      message: `${h.actor} was told its lease of "${h.key}" (fence ${h.fence}) was lost (rejected), yet the store still held it under that fence ${seen.start - lossAt} ms later (ttl ${lock.ttlMs} ms): a false loss`,
    });
  }
  return violations;
}
