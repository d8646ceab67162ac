import type * as OpenTelemetryApiModule from '@opentelemetry/api';
import { loadOptionalPeer } from '../support/optional-peer.js';

export type OpenTelemetryApi = typeof OpenTelemetryApiModule;

/**
 * Loads `@opentelemetry/api` when the `openTelemetry` option is on (an optional peer). Both copies of the
 * API, should an application load two, share one global registry, so either finds the SDK.
 */
export function loadOpenTelemetryApi(): Promise<OpenTelemetryApi> {
  return loadOptionalPeer('@opentelemetry/api', { option: 'openTelemetry', value: true, isModule: (api) => typeof api.metrics === 'object' });
}
