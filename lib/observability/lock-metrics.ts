import type { Attributes, Meter } from '@opentelemetry/api';
import type { LockShapeFields, LockAcquisitionEvent, LockLeaseEvent, LockWakeUps } from '../events/lock-event.types.js';
import type { LockEvents } from '../events/lock-events.js';
import type { WatchdogStatus } from '../watchdog/lease.watchdog.js';
import { leaseIdentity } from './lease-identity.js';
import { LockInstruments, type InstrumentedApplication } from './lock-instruments.js';
import { ATTRIBUTE } from './lock-metric.names.js';
import { addShapeAttributes } from './shape-attributes.js';

/** What one application's metrics need besides its events. */
export interface LockMetricsSource {
  readonly events: LockEvents;
  /** The `distributed_lock.store` attribute. */
  readonly store: string;
  readonly keyAttribute: boolean;
  /** The watchdog's status, read at each collection. */
  watchdogStatus(): WatchdogStatus;
}

interface HeldLease {
  readonly grantedAt: number;
  /** Of the held count and the hold time: store, name, and the key when enabled. */
  readonly attributes: Attributes;
  /** Of the longest-hold gauge: store and name only, so that its series stay few even with keys. */
  readonly series: Attributes;
  /** `series` (store and name) as a map key: no serialization of every held lease at every collection. */
  readonly seriesKey: string;
}

const WAKE_UP_CAUSES: readonly (keyof LockWakeUps)[] = ['notification', 'backoff', 'expiry', 'deadline'];

/**
 * Turns one application's lock events into OpenTelemetry metrics. Listens for the application's whole life
 * (leases abandoned at shutdown are counted too); `stop()` takes the application out of the gauges.
 */
export class LockMetrics implements InstrumentedApplication {
  private readonly instruments: LockInstruments;
  // Leases granted and not yet settled: the source of the held count and of the longest current hold.
  private readonly held = new Map<string, HeldLease>();

  constructor(
    meter: Meter,
    private readonly source: LockMetricsSource,
  ) {
    this.instruments = LockInstruments.join(meter, this);
    this.subscribe(source.events);
  }

  /**
   * Takes the application out of the gauges. Its events are still counted: shutdown may abandon leases
   * after this ran, and the held count must come back down.
   */
  stop(): void {
    this.instruments.leave(this);
  }

  heldLeases(): Iterable<HeldLease> {
    return this.held.values();
  }

  overdueRenewals(): { overdue: number; store: string } {
    return { overdue: this.source.watchdogStatus().overdue, store: this.source.store };
  }

  private subscribe(events: LockEvents): void {
    const { instruments } = this;
    events.on('acquired', (e) => {
      this.acquisition(e, 'granted');
      const attributes = this.attributes(e);
      const series = this.source.keyAttribute ? this.named(e.name) : attributes;
      this.held.set(leaseIdentity(e), { grantedAt: Date.now(), attributes, series, seriesKey: `${this.source.store}\0${e.name ?? ''}` });
      instruments.held.add(1, attributes);
    });
    events.on('not-acquired', (e) => this.acquisition(e, e.reason === 'taken' ? 'not_acquired' : e.reason));
    events.on('store-unavailable', (e) => this.acquisition(e, 'store_unavailable'));
    events.on('released', (e) => this.settled(e, 'released', e.heldMs));
    events.on('release-failed', (e) => this.settled(e, 'release_failed', e.heldMs));
    events.on('lost', (e) => {
      instruments.lost.add(1, this.attributes(e, ATTRIBUTE.lostReason, e.reason));
      if (e.renewLatencyMs !== undefined) this.renewal(e, 'rejected', e.renewLatencyMs);
      this.settled(e, 'lost', e.heldMs);
    });
    events.on('renewed', (e) => this.renewal(e, 'renewed', e.latencyMs));
    events.on('renew-failed', (e) => this.renewal(e, 'failed', e.latencyMs));
    events.on('deferred', (e) => instruments.deferred.add(1, this.attributes(e)));
  }

  private acquisition(e: LockAcquisitionEvent, outcome: string): void {
    const attributes = this.attributes(e, ATTRIBUTE.acquireOutcome, outcome);
    this.instruments.acquireDuration.record(e.waitedMs / 1000, attributes);
    this.instruments.acquireAttempts.record(e.attempts, attributes);
    for (const cause of WAKE_UP_CAUSES) {
      const count = e.wakeUps[cause];
      if (count > 0) this.instruments.wakeUps.add(count, this.attributes(e, ATTRIBUTE.wakeUpCause, cause));
    }
  }

  private renewal(e: LockLeaseEvent, outcome: string, latencyMs: number): void {
    this.instruments.renewDuration.record(latencyMs / 1000, this.attributes(e, ATTRIBUTE.renewOutcome, outcome));
  }

  /**
   * A lease ended. Only leases seen granted count here: one whose caller aborted right after the grant is
   * released without ever having been reported acquired.
   */
  private settled(e: LockLeaseEvent, outcome: string, heldMs: number): void {
    const id = leaseIdentity(e);
    const lease = this.held.get(id);
    if (!lease) return;
    this.held.delete(id);
    this.instruments.held.add(-1, lease.attributes);
    this.instruments.holdDuration.record(heldMs / 1000, { ...lease.attributes, [ATTRIBUTE.holdOutcome]: outcome });
  }

  private attributes(e: { key: string; name: string | undefined } & LockShapeFields, extra?: string, value?: string): Attributes {
    const attributes = this.named(e.name);
    if (this.source.keyAttribute) attributes[ATTRIBUTE.key] = e.key;
    addShapeAttributes(attributes, e);
    if (extra !== undefined) attributes[extra] = value;
    return attributes;
  }

  private named(name: string | undefined): Attributes {
    const attributes: Attributes = { [ATTRIBUTE.store]: this.source.store };
    if (name !== undefined) attributes[ATTRIBUTE.name] = name;
    return attributes;
  }
}
