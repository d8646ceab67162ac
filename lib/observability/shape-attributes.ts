import type { Attributes } from '@opentelemetry/api';
import type { LockShapeFields } from '../events/lock-event.types.js';
import { ATTRIBUTE } from './lock-metric.names.js';

/**
 * Adds a read/write lock's or a semaphore's shape (and permits) to `attributes`, for metrics and spans
 * alike; nothing for a plain lock, whose series and spans keep the attributes they always had.
 */
export function addShapeAttributes(attributes: Attributes, e: LockShapeFields): Attributes {
  if (e.shape !== undefined) attributes[ATTRIBUTE.shape] = e.shape;
  if (e.permits !== undefined) attributes[ATTRIBUTE.permits] = e.permits;
  return attributes;
}
