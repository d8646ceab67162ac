import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { fencedWrite, LockConfigError, StaleFencingTokenError, type LockModuleOptions } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { moduleStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';
import { inMemoryMetrics } from './metric-snapshot';

/** A write refused for its stale token (a custom `FencedWrite`: the resource always holds fence 9). */
const staleWrite = () =>
  fencedWrite({ resource: 'accounts', fencedBy: 5, apply: async () => 0, readFence: async () => 9 }).catch((error: unknown) => {
    expect(error).toBeInstanceOf(StaleFencingTokenError);
  });

describe('the openTelemetry option', () => {
  const prefix = testPrefix(__filename);

  it('records into the global meter provider that the OpenTelemetry SDK registered', async () => {
    const { meterProvider, collect } = inMemoryMetrics();
    metrics.setGlobalMeterProvider(meterProvider);
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix, openTelemetry: true });
    try {
      await app.locks.withLock('k', { name: 'global' }, async () => undefined);
      const snapshot = await collect();
      expect(snapshot.count('distributed_lock.acquire.duration', { 'distributed_lock.name': 'global', 'distributed_lock.store': 'memory' })).toBe(1);
    } finally {
      await app.close();
      metrics.disable();
      await meterProvider.shutdown();
    }
  });

  it('adds the key as an attribute only when keyAttribute is on, and never to the longest-hold gauge', async () => {
    const { meterProvider, collect } = inMemoryMetrics();
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix, openTelemetry: { meterProvider, keyAttribute: true } });
    try {
      const lease = await app.locks.acquire('tenant:7', { name: 'tenant' });
      const snapshot = await collect();
      expect(snapshot.count('distributed_lock.held', { 'distributed_lock.key': 'tenant:7' })).toBe(1);
      expect(snapshot.count('distributed_lock.acquire.duration', { 'distributed_lock.key': 'tenant:7' })).toBe(1);
      expect(snapshot.points('distributed_lock.held.max_duration').map((point) => point.attributes)).toEqual([
        { 'distributed_lock.store': 'memory', 'distributed_lock.name': 'tenant' },
      ]);
      await lease.release();
    } finally {
      await app.close();
      await meterProvider.shutdown();
    }
  });

  it('stops reading a closed application, and counts stale writes only while an application uses the meter', async () => {
    const { meterProvider, collect } = inMemoryMetrics();
    const options: LockModuleOptions = { store: 'memory', keyPrefix: prefix, shutdownGraceMs: 0, openTelemetry: { meterProvider } };
    const [first, second] = await Promise.all([createLockApp(options), createLockApp(options)]);
    try {
      await first.locks.acquire('left-held', { name: 'left-held' });
      await staleWrite();
      let snapshot = await collect();
      expect(snapshot.count('distributed_lock.fencing.stale_writes', { 'distributed_lock.fencing.resource': 'accounts' })).toBe(1);
      expect(snapshot.count('distributed_lock.held')).toBe(1);

      // Closing abandons the lease still held: counted as lost at shutdown, no longer held.
      await first.close();
      snapshot = await collect();
      expect(snapshot.count('distributed_lock.held')).toBe(0);
      expect(snapshot.count('distributed_lock.lost', { 'distributed_lock.lost.reason': 'shutdown' })).toBe(1);
      expect(snapshot.points('distributed_lock.held.max_duration').map((point) => point.value)).toEqual([0]);
      await staleWrite();
      expect((await collect()).count('distributed_lock.fencing.stale_writes')).toBe(2);

      await second.close();
      await staleWrite();
      expect((await collect()).count('distributed_lock.fencing.stale_writes')).toBe(2);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await meterProvider.shutdown();
    }
  });

  it.each([
    ['yes', /"openTelemetry" = "yes": expected true, false or an options object/],
    [{ span: true }, /"openTelemetry.span" = true: expected no such option/],
    [{ spans: 'on' }, /"openTelemetry.spans" = "on": expected true or false/],
    [{ meterProvider: {} }, /"openTelemetry.meterProvider" = \[object Object\]: expected an OpenTelemetry MeterProvider/],
  ])('refuses openTelemetry: %p at startup', async (openTelemetry, message) => {
    const error = await moduleStartError({ store: 'memory', keyPrefix: prefix, openTelemetry: openTelemetry as never });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('does not load @opentelemetry/api unless the option is on, and says what to install when it is missing', () => {
    const child = spawnSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), join(__dirname, 'without-opentelemetry.script.ts')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout.trim())).toEqual({
      locked: 'locked',
      apiLoaded: false,
      startup: expect.stringMatching(/^LockConfigError: .*npm install @opentelemetry\/api/),
    });
  });
});
