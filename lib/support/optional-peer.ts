import { LockConfigError } from '../errors/lock-config.error.js';

/** Which option asked for an optional peer, for the error when it is missing. */
export interface OptionalPeerRequest {
  /** The option that needs it (`store`, `openTelemetry`). */
  readonly option: string;
  /** Its value, as the error shows it. */
  readonly value: unknown;
  /** True for the module object itself (not its `default` export). */
  readonly isModule: (loaded: Record<string, unknown>) => boolean;
}

/**
 * Loads an optional peer dependency when the feature that needs it is used, never at import time:
 * applications that do not use it must not need it installed. The CommonJS build of this library (and
 * Jest, which runs CommonJS) requires it; the ES module build imports it, which may hand back the module
 * under `default`. A missing package is a `LockConfigError` at startup saying what to install.
 */
export async function loadOptionalPeer<T>(packageName: string, request: OptionalPeerRequest): Promise<T> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (typeof require === 'function' ? require(packageName) : await import(packageName)) as Record<string, unknown>;
  } catch (error) {
    throw new LockConfigError(
      request.option,
      request.value,
      `the "${packageName}" package installed next to this library (npm install ${packageName}): ${(error as Error).message}`,
    );
  }
  return (request.isModule(loaded) ? loaded : loaded.default) as T;
}
