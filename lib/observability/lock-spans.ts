import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { LockAcquisitionEvent, LockLeaseEvent, LockShapeFields } from '../events/lock-event.types.js';
import type { LockEvents } from '../events/lock-events.js';
import type { OpenTelemetryApi } from './opentelemetry.loader.js';
import { leaseIdentity } from './lease-identity.js';
import { ATTRIBUTE, SPAN } from './lock-metric.names.js';
import { addShapeAttributes } from './shape-attributes.js';

/**
 * Spans from one application's lock events, parented to the span active where the lock was taken (events
 * are emitted synchronously in the caller's async context):
 * - `distributed_lock.acquire`, one per acquisition, from the call to its outcome (built when it ends, with
 *   its start time set back by the wait, so nothing is allocated while waiting);
 * - `distributed_lock.hold`, from the grant to the release, loss or failed release; a deferred release
 *   (transaction) is an event on it.
 * The locked work's own spans are its siblings, not its children: the hold span is never made active, so a
 * lease that outlives the request cannot leak its context into unrelated work.
 */
export class LockSpans {
  private readonly holds = new Map<string, Span>();

  constructor(
    private readonly api: OpenTelemetryApi,
    private readonly tracer: Tracer,
    events: LockEvents,
    private readonly store: string,
  ) {
    events.on('acquired', (e) => {
      this.acquisition(e, 'granted', e);
      const hold = this.tracer.startSpan(SPAN.hold, { kind: api.SpanKind.INTERNAL }, api.context.active());
      // A no-op tracer (no SDK, or sampled out) gets nothing built or kept for it.
      if (!hold.isRecording()) return;
      hold.setAttributes(this.leaseAttributes(e));
      this.holds.set(leaseIdentity(e), hold);
    });
    events.on('not-acquired', (e) => this.acquisition(e, e.reason === 'taken' ? 'not_acquired' : e.reason));
    events.on('store-unavailable', (e) => this.acquisition(e, 'store_unavailable', undefined, e.error));
    events.on('deferred', (e) => this.holds.get(leaseIdentity(e))?.addEvent('release deferred to the transaction'));
    events.on('released', (e) => this.endHold(e, 'released'));
    events.on('release-failed', (e) => this.endHold(e, 'release_failed', e.error));
    events.on('lost', (e) => this.endHold(e, 'lost', undefined, e.reason));
  }

  private acquisition(e: LockAcquisitionEvent, outcome: string, granted?: LockLeaseEvent, error?: unknown): void {
    const span = this.tracer.startSpan(
      SPAN.acquire,
      { kind: this.api.SpanKind.INTERNAL, startTime: Date.now() - e.waitedMs },
      this.api.context.active(),
    );
    if (span.isRecording()) {
      span.setAttributes({ ...(granted ? this.leaseAttributes(granted) : this.base(e)), [ATTRIBUTE.acquireOutcome]: outcome, [ATTRIBUTE.attempts]: e.attempts });
      if (error !== undefined) this.fail(span, error);
    }
    span.end();
  }

  private endHold(e: LockLeaseEvent, outcome: string, error?: unknown, lostReason?: string): void {
    const id = leaseIdentity(e);
    const span = this.holds.get(id);
    if (!span) return;
    this.holds.delete(id);
    span.setAttribute(ATTRIBUTE.holdOutcome, outcome);
    if (lostReason !== undefined) {
      span.setAttribute(ATTRIBUTE.lostReason, lostReason);
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: `lease lost (${lostReason})` });
    }
    if (error !== undefined) this.fail(span, error);
    span.end();
  }

  private fail(span: Span, error: unknown): void {
    const exception = error instanceof Error ? error : new Error(String(error));
    span.recordException(exception);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: exception.message });
  }

  private base(e: { key: string; name: string | undefined } & LockShapeFields): Attributes {
    const attributes: Attributes = { [ATTRIBUTE.store]: this.store, [ATTRIBUTE.key]: e.key };
    if (e.name !== undefined) attributes[ATTRIBUTE.name] = e.name;
    return addShapeAttributes(attributes, e);
  }

  private leaseAttributes(e: LockLeaseEvent): Attributes {
    return { ...this.base(e), [ATTRIBUTE.fencingToken]: e.fencingToken, [ATTRIBUTE.tokenDigest]: e.tokenDigest };
  }
}
