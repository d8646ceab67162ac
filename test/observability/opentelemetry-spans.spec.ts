import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { LockNotAcquiredError, LockStoreUnavailableError } from '../../lib/index';
import { freePort } from '../../scripts/servers/redis-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

/**
 * Spans are opt-in (`openTelemetry: { spans: true }`). Proves they nest under the span active where the lock
 * was taken (with the SDK's AsyncLocalStorage context manager, as a Nest app under the Node SDK has), carry
 * the key, the name and the fencing token, and say how the acquisition and the hold ended.
 */
describe('OpenTelemetry spans', () => {
  const prefix = testPrefix(__filename);
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = tracerProvider.getTracer('test');
  let app: LockApp;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    app = await createLockApp({ store: 'memory', keyPrefix: prefix, leaseMs: 300, openTelemetry: { spans: true, tracerProvider } });
  });
  afterAll(async () => {
    await app.close();
    await tracerProvider.shutdown();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  const finished = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name);

  it('records the acquisition and the hold as children of the span that took the lock', async () => {
    let fencingToken = 0;
    const parent = await tracer.startActiveSpan('POST /orders/:id/pay', async (span) => {
      await app.locks.withLock('order:1', { name: 'order:{orderId}' }, async (lease) => {
        fencingToken = lease.fencingToken;
      });
      span.end();
      return span.spanContext();
    });
    const [acquire] = finished('distributed_lock.acquire');
    const [hold] = finished('distributed_lock.hold');
    for (const span of [acquire!, hold!]) {
      expect(span.spanContext().traceId).toBe(parent.traceId);
      expect(span.parentSpanContext?.spanId).toBe(parent.spanId);
    }
    expect(acquire!.attributes).toMatchObject({
      'distributed_lock.key': 'order:1',
      'distributed_lock.name': 'order:{orderId}',
      'distributed_lock.store': 'memory',
      'distributed_lock.acquire.outcome': 'granted',
      'distributed_lock.acquire.attempts': 1,
      'distributed_lock.fencing_token': fencingToken,
    });
    expect(hold!.attributes).toMatchObject({ 'distributed_lock.hold.outcome': 'released', 'distributed_lock.fencing_token': fencingToken });
    expect(hold!.status.code).toBe(SpanStatusCode.UNSET);
    // The hold starts where the acquisition ended.
    expect(hold!.startTime[0] * 1e3 + hold!.startTime[1] / 1e6).toBeGreaterThanOrEqual(acquire!.endTime[0] * 1e3 + acquire!.endTime[1] / 1e6 - 1);
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes))).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('ends the hold span in error when the lease is lost, with the reason', async () => {
    const lease = await app.locks.acquire('ledger');
    const lost = app.next('lost', (e) => e.key === 'ledger');
    await app.store.forceRelease('ledger', lease.fencingToken);
    await lost;
    const [hold] = finished('distributed_lock.hold');
    expect(hold!.attributes).toMatchObject({ 'distributed_lock.hold.outcome': 'lost', 'distributed_lock.lost.reason': 'rejected' });
    expect(hold!.status).toMatchObject({ code: SpanStatusCode.ERROR });
    await lease.release().catch(() => undefined);
  });

  it('records a key that stayed taken as not acquired, and a store failure as an error with its exception', async () => {
    const held = await app.locks.acquire('job');
    await expect(app.locks.acquire('job', { waitMs: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    await held.release();
    const down = await createLockApp({
      redis: `redis://127.0.0.1:${await freePort()}`,
      keyPrefix: prefix,
      commandTimeoutMs: 200,
      openTelemetry: { spans: true, metrics: false, tracerProvider },
    });
    try {
      await expect(down.locks.acquire('job', { waitMs: 0 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
    } finally {
      await down.close();
    }
    const outcomes = finished('distributed_lock.acquire').map((span) => span.attributes['distributed_lock.acquire.outcome']);
    expect(outcomes).toEqual(['granted', 'not_acquired', 'store_unavailable']);
    const failed = finished('distributed_lock.acquire')[2]!;
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.events.map((event) => event.name)).toEqual(['exception']);
    expect(failed.attributes['distributed_lock.store']).toBe('redis');
  });

  it('puts the shape (and the permits) of a read lock and a semaphore on both spans, and none on a plain lock', async () => {
    const reader = await app.locks.acquire('doc', { mode: 'read', name: 'doc' });
    const permit = await app.locks.acquire('partner', { permits: 3, name: 'partner' });
    const plain = await app.locks.acquire('order:2', { name: 'order' });
    await Promise.all([reader.release(), permit.release(), plain.release()]);
    const byName = (span: ReadableSpan): unknown => span.attributes['distributed_lock.name'];
    for (const name of ['distributed_lock.acquire', 'distributed_lock.hold']) {
      const spans = finished(name);
      expect(spans.find((span) => byName(span) === 'doc')!.attributes).toMatchObject({ 'distributed_lock.shape': 'read' });
      expect(spans.find((span) => byName(span) === 'partner')!.attributes).toMatchObject({ 'distributed_lock.shape': 'permits', 'distributed_lock.permits': 3 });
      const plainSpan = spans.find((span) => byName(span) === 'order')!;
      expect(plainSpan.attributes).not.toHaveProperty('distributed_lock.shape');
      expect(plainSpan.attributes).not.toHaveProperty('distributed_lock.permits');
    }
  });

  it('costs a no-op span when spans are on but no tracer provider is registered', async () => {
    const bare = await createLockApp({ store: 'memory', keyPrefix: `${prefix}bare:`, openTelemetry: { spans: true, metrics: false } });
    try {
      expect(trace.getTracerProvider().getTracer('x').startSpan('probe').isRecording()).toBe(false);
      await expect(bare.locks.withLock('k', async () => 'done')).resolves.toBe('done');
    } finally {
      await bare.close();
    }
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
