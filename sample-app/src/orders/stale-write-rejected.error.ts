import { ConflictException } from '@nestjs/common';

/**
 * The database refused a write carrying an older fencing token than the last one applied: the writer's
 * lease had ended (e.g. its process was paused) and another holder wrote since. The transaction rolls back.
 */
export class StaleWriteRejectedError extends ConflictException {
  constructor(orderId: string, fencingToken: number) {
    super(`Write to order ${orderId} with fencing token ${fencingToken} rejected: a newer lock holder already wrote.`);
  }
}
