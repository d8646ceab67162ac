import type { Attributes, Counter, Histogram, Meter, ObservableGauge, ObservableResult, UpDownCounter } from '@opentelemetry/api';
import { onStaleFencingToken } from '../fencing/stale-fencing-token.channel.js';
import { processWide } from '../support/process-wide.js';
import { ATTEMPT_BUCKETS, ATTRIBUTE, DURATION_BUCKETS, HOLD_BUCKETS, METRIC } from './lock-metric.names.js';

/** What the instruments read from each application at collection time. */
export interface InstrumentedApplication {
  /** Grant time and gauge series (store and name) of every lease held right now. */
  heldLeases(): Iterable<{ readonly grantedAt: number; readonly series: Attributes; readonly seriesKey: string }>;
  /** Leases whose renewal is overdue, and the store attribute to report them under. */
  overdueRenewals(): { readonly overdue: number; readonly store: string };
}

/**
 * Every instrument, created once per meter and shared by the applications that record into it. Sharing is
 * what keeps two applications of one process (or the CommonJS and ESM copies of this package) from
 * overwriting each other's gauge readings or counting a process-wide event twice: the observable gauges
 * read all applications in one callback, and stale-token refusals, which are published process-wide, are
 * counted by one subscription per meter while any application uses it.
 */
export class LockInstruments {
  readonly acquireDuration: Histogram;
  readonly acquireAttempts: Histogram;
  readonly wakeUps: Counter;
  readonly held: UpDownCounter;
  readonly holdDuration: Histogram;
  readonly renewDuration: Histogram;
  readonly lost: Counter;
  readonly deferred: Counter;
  private readonly staleWrites: Counter;
  private readonly heldMaxDuration: ObservableGauge;
  private readonly renewOverdue: ObservableGauge;
  private readonly applications = new Set<InstrumentedApplication>();
  // Series of the longest-hold gauge observed so far, kept so they read 0 once nothing is held instead of
  // repeating their last value (the SDK reports unobserved series again). Bounded by names × stores.
  private readonly holdSeries = new Map<string, Attributes>();
  private unsubscribeStaleWrites?: () => void;

  private constructor(meter: Meter) {
    const seconds = (description: string, buckets: readonly number[]) => ({
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: [...buckets] },
    });
    this.acquireDuration = meter.createHistogram(
      METRIC.acquireDuration,
      seconds('Time from an acquire call to its outcome; its count is the number of acquisitions by outcome.', DURATION_BUCKETS),
    );
    this.acquireAttempts = meter.createHistogram(METRIC.acquireAttempts, {
      description: 'Store calls per acquisition: 1 when the key was free; retries are attempts - 1.',
      unit: '{attempt}',
      advice: { explicitBucketBoundaries: [...ATTEMPT_BUCKETS] },
    });
    this.wakeUps = meter.createCounter(METRIC.acquireWakeUps, {
      description: 'Times a waiting acquisition woke up to retry, by cause (release notification, backoff, holder expiry, deadline).',
      unit: '{wake_up}',
    });
    this.held = meter.createUpDownCounter(METRIC.held, { description: 'Leases held right now.', unit: '{lease}' });
    this.holdDuration = meter.createHistogram(
      METRIC.holdDuration,
      seconds('Time from grant to release, to loss, or to a failed release.', HOLD_BUCKETS),
    );
    this.renewDuration = meter.createHistogram(
      METRIC.renewDuration,
      seconds('Round trip of a watchdog renewal, per lease, by outcome (renewed; failed: unknown; rejected: lease gone).', DURATION_BUCKETS),
    );
    this.lost = meter.createCounter(METRIC.lost, { description: 'Leases lost while held, by reason.', unit: '{lease}' });
    this.deferred = meter.createCounter(METRIC.releaseDeferred, {
      description: 'Releases handed to the surrounding transaction (given back after its commit or rollback).',
      unit: '{lease}',
    });
    this.staleWrites = meter.createCounter(METRIC.staleWrites, {
      description: 'Writes a fencing helper refused because a newer fencing token had already written.',
      unit: '{write}',
    });
    this.heldMaxDuration = meter.createObservableGauge(METRIC.heldMaxDuration, {
      description: 'How long the longest-held current lease has been held.',
      unit: 's',
    });
    this.renewOverdue = meter.createObservableGauge(METRIC.renewOverdue, {
      description: 'Held leases whose renewal is late by more than one renew interval (the watchdog is falling behind).',
      unit: '{lease}',
    });
  }

  /** The instruments of `meter`, for one more application until `leave`. */
  static join(meter: Meter, application: InstrumentedApplication): LockInstruments {
    let instruments = shared.get(meter);
    if (!instruments) {
      instruments = new LockInstruments(meter);
      shared.set(meter, instruments);
    }
    if (instruments.applications.size === 0) instruments.start();
    instruments.applications.add(application);
    return instruments;
  }

  leave(application: InstrumentedApplication): void {
    if (!this.applications.delete(application) || this.applications.size > 0) return;
    this.heldMaxDuration.removeCallback(this.observeHeld);
    this.renewOverdue.removeCallback(this.observeOverdue);
    this.unsubscribeStaleWrites?.();
    this.unsubscribeStaleWrites = undefined;
  }

  private start(): void {
    this.heldMaxDuration.addCallback(this.observeHeld);
    this.renewOverdue.addCallback(this.observeOverdue);
    this.unsubscribeStaleWrites = onStaleFencingToken((event) =>
      this.staleWrites.add(1, { [ATTRIBUTE.fencingResource]: event.resource, [ATTRIBUTE.fencingHelper]: event.helper }),
    );
  }

  private readonly observeHeld = (result: ObservableResult): void => {
    // One series per store and name: the longest hold in it, 0 when none is held any more.
    const longest = new Map<string, number>();
    const now = Date.now();
    for (const application of this.applications) {
      for (const lease of application.heldLeases()) {
        const series = lease.seriesKey;
        if (!this.holdSeries.has(series)) this.holdSeries.set(series, lease.series);
        longest.set(series, Math.max(longest.get(series) ?? 0, (now - lease.grantedAt) / 1000));
      }
    }
    for (const [series, attributes] of this.holdSeries) result.observe(longest.get(series) ?? 0, attributes);
  };

  private readonly observeOverdue = (result: ObservableResult): void => {
    const byStore = new Map<string, number>();
    for (const application of this.applications) {
      const { overdue, store } = application.overdueRenewals();
      byStore.set(store, (byStore.get(store) ?? 0) + overdue);
    }
    for (const [store, overdue] of byStore) result.observe(overdue, { [ATTRIBUTE.store]: store });
  };
}

// Keyed in the global registry on purpose: both copies of this package (CommonJS and ESM) in one process
// must share one set of instruments per meter, or the gauges and the stale-write count would collide.
const shared = processWide('opentelemetry-instruments', () => new WeakMap<Meter, LockInstruments>());
