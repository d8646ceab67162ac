import { METRIC } from '../../lib/observability/lock-metric.names';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { inMemoryMetrics } from './metric-snapshot';

describe('metrics of read/write locks and semaphores', () => {
  it('puts shape (and permits) on their series, and keeps plain series as they were', async () => {
    const { meterProvider, collect } = inMemoryMetrics();
    const app = await createLockApp({ store: 'memory', keyPrefix: testPrefix(__filename), openTelemetry: { meterProvider } });
    try {
      const reader = await app.locks.acquire('doc', { mode: 'read', name: 'doc' });
      const permit = await app.locks.acquire('partner', { permits: 3, name: 'partner' });
      const plain = await app.locks.acquire('order', { name: 'order' });
      const held = await collect();
      expect(held.count(METRIC.held, { 'distributed_lock.name': 'doc', 'distributed_lock.shape': 'read' })).toBe(1);
      expect(held.count(METRIC.held, { 'distributed_lock.name': 'partner', 'distributed_lock.shape': 'permits', 'distributed_lock.permits': 3 })).toBe(1);
      const plainPoints = held.points(METRIC.held, { 'distributed_lock.name': 'order' });
      expect(plainPoints.map((point) => Object.keys(point.attributes).sort())).toEqual([['distributed_lock.name', 'distributed_lock.store']]);
      await Promise.all([reader.release(), permit.release(), plain.release()]);
      const after = await collect();
      expect(after.count(METRIC.acquireDuration, { 'distributed_lock.shape': 'read', 'distributed_lock.acquire.outcome': 'granted' })).toBe(1);
      expect(after.count(METRIC.held, { 'distributed_lock.shape': 'read' })).toBe(0);
    } finally {
      await app.close();
    }
  });
});
