import type { FactoryProvider, OnApplicationShutdown } from '@nestjs/common';
import type { Meter, Tracer } from '@opentelemetry/api';
import { LockEvents } from '../events/lock-events.js';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import type { ResolvedLockOptions } from '../options/lock-module-options.interface.js';
import { LeaseWatchdog } from '../watchdog/lease.watchdog.js';
import { LockMetrics } from './lock-metrics.js';
import { LOCK_INSTRUMENTATION_SCOPE } from './lock-metric.names.js';
import { LockSpans } from './lock-spans.js';
import { loadOpenTelemetryApi } from './opentelemetry.loader.js';
import { storeAttribute } from './store-attribute.js';

/** One application's OpenTelemetry metrics and spans; empty unless the `openTelemetry` option is on. */
export class LockTelemetry implements OnApplicationShutdown {
  constructor(
    readonly metrics?: LockMetrics,
    readonly spans?: LockSpans,
  ) {}

  onApplicationShutdown(): void {
    this.metrics?.stop();
  }
}

/**
 * Subscribes metrics and spans to the application's events when `openTelemetry` is on, loading
 * `@opentelemetry/api` only then. With the option off nothing listens, so no event payload is ever built.
 */
export const lockTelemetryProvider: FactoryProvider<LockTelemetry | Promise<LockTelemetry>> = {
  provide: LockTelemetry,
  inject: [RESOLVED_LOCK_OPTIONS, LockEvents, LeaseWatchdog],
  useFactory: (options: ResolvedLockOptions, events: LockEvents, watchdog: LeaseWatchdog) => {
    const telemetry = options.openTelemetry;
    if (!telemetry || (!telemetry.metrics && !telemetry.spans)) return new LockTelemetry();
    return loadOpenTelemetryApi().then((api) => {
      const store = storeAttribute(options.store);
      const metrics = telemetry.metrics
        ? new LockMetrics((telemetry.meterProvider ?? api.metrics.getMeterProvider()).getMeter(LOCK_INSTRUMENTATION_SCOPE) as Meter, {
            events,
            store,
            keyAttribute: telemetry.keyAttribute,
            watchdogStatus: () => watchdog.status(),
          })
        : undefined;
      const spans = telemetry.spans
        ? new LockSpans(api, (telemetry.tracerProvider ?? api.trace.getTracerProvider()).getTracer(LOCK_INSTRUMENTATION_SCOPE) as Tracer, events, store)
        : undefined;
      return new LockTelemetry(metrics, spans);
    });
  },
};
