import { LockConfigError } from '../errors/lock-config.error.js';
import { booleanOption } from '../support/boolean-option.js';

/**
 * Anything with OpenTelemetry's `MeterProvider.getMeter` (the SDK's `MeterProvider`). Typed here so that
 * the core's declarations need no `@opentelemetry/api` import: it is an optional peer.
 */
export interface LockMeterProvider {
  getMeter(name: string, version?: string, options?: { schemaUrl?: string }): object;
}

/** Anything with OpenTelemetry's `TracerProvider.getTracer` (the SDK's tracer providers). */
export interface LockTracerProvider {
  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): object;
}

/** The `openTelemetry` module option in its object form; `true` means all defaults. */
export interface LockTelemetryOptions {
  /**
   * Record metrics (see docs/observability.md for each instrument).
   * @default true
   */
  readonly metrics?: boolean;
  /**
   * Record a `distributed_lock.acquire` span per acquisition and a `distributed_lock.hold` span per lease,
   * as children of the span active where the lock was taken. Without a tracer provider they cost a no-op.
   * @default false
   */
  readonly spans?: boolean;
  /**
   * Add the lock key to every metric as `distributed_lock.key`. Keys are unbounded (one per order, per
   * user…): only turn this on when the keys of this application are a small fixed set. Spans always carry it.
   * @default false
   */
  readonly keyAttribute?: boolean;
  /**
   * Where metrics go. Register the SDK before the application starts: a meter is taken once, at startup.
   * @default the global meter provider (`metrics.getMeterProvider()`, set by the OpenTelemetry SDK)
   */
  readonly meterProvider?: LockMeterProvider;
  /** @default the global tracer provider (`trace.getTracerProvider()`) */
  readonly tracerProvider?: LockTracerProvider;
}

/** {@link LockTelemetryOptions} after defaults and validation. */
export interface ResolvedTelemetryOptions {
  readonly metrics: boolean;
  readonly spans: boolean;
  readonly keyAttribute: boolean;
  readonly meterProvider: LockMeterProvider | undefined;
  readonly tracerProvider: LockTracerProvider | undefined;
}

const KNOWN = new Set(['metrics', 'spans', 'keyAttribute', 'meterProvider', 'tracerProvider']);

/** Validates the `openTelemetry` module option at startup; undefined when it is off. */
export function resolveTelemetryOptions(value: unknown): ResolvedTelemetryOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) value = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigError('openTelemetry', value, 'true, false or an options object');
  }
  const options = value as Record<string, unknown>;
  for (const name of Object.keys(options)) {
    if (!KNOWN.has(name)) throw new LockConfigError(`openTelemetry.${name}`, options[name], 'no such option (typo?)');
  }
  const flag = (name: 'metrics' | 'spans' | 'keyAttribute', fallback: boolean): boolean => booleanOption(`openTelemetry.${name}`, options[name], fallback);
  const provider = <P>(name: 'meterProvider' | 'tracerProvider', method: string): P | undefined => {
    const candidate = options[name];
    if (candidate === undefined) return undefined;
    if (typeof candidate !== 'object' || candidate === null || typeof (candidate as Record<string, unknown>)[method] !== 'function') {
      throw new LockConfigError(`openTelemetry.${name}`, candidate, `an OpenTelemetry ${name === 'meterProvider' ? 'MeterProvider' : 'TracerProvider'} (with ${method})`);
    }
    return candidate as P;
  };
  return {
    metrics: flag('metrics', true),
    spans: flag('spans', false),
    keyAttribute: flag('keyAttribute', false),
    meterProvider: provider<LockMeterProvider>('meterProvider', 'getMeter'),
    tracerProvider: provider<LockTracerProvider>('tracerProvider', 'getTracer'),
  };
}
