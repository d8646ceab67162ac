import type * as OpenTelemetryApiModule from '@opentelemetry/api';
import { LockConfigError } from '../errors/lock-config.error.js';

export type OpenTelemetryApi = typeof OpenTelemetryApiModule;

/**
 * Loads `@opentelemetry/api` when the `openTelemetry` option is on, never at import time: it is an optional
 * peer dependency. The CommonJS build requires it (which is also what Jest's module registry sees); the ES
 * module build imports it. Both copies of the API share one global registry, so either finds the SDK.
 */
export async function loadOpenTelemetryApi(): Promise<OpenTelemetryApi> {
  try {
    const loaded = (typeof require === 'function' ? require('@opentelemetry/api') : await import('@opentelemetry/api')) as OpenTelemetryApi & {
      default?: OpenTelemetryApi;
    };
    return typeof loaded.metrics === 'object' ? loaded : loaded.default!;
  } catch (error) {
    throw new LockConfigError(
      'openTelemetry',
      true,
      `the "@opentelemetry/api" package installed next to this library (npm install @opentelemetry/api): ${(error as Error).message}`,
    );
  }
}
