import { Logger } from '@nestjs/common';
import type { LockKeyError } from '../errors/lock-key.error.js';
import type { LockedMethod } from './locked-method.js';

const logger = new Logger('DistributedLock');

/** Methods whose refused keys were logged at warn already (weakly: one entry per decorated method). */
const warned = new WeakSet<LockedMethod>();

/**
 * A call whose arguments cannot make a key gets `LockKeyError` (HTTP 400), which the client sees without
 * the detail; the log says which placeholder of which method failed: once per method at warn, then at
 * debug, so a stream of bad requests does not flood it.
 */
export function logRefusedKey(method: LockedMethod, error: LockKeyError): void {
  if (warned.has(method)) {
    logger.debug(error.message);
    return;
  }
  warned.add(method);
  logger.warn(`${error.message} (the caller got LockKeyError, HTTP 400; later refusals of ${method.label} are logged at debug level)`);
}
