import { ConflictException } from '@nestjs/common';

/**
 * The order no longer holds what this payment read, though no newer fencing token wrote it: a holder whose
 * uncommitted write this one read around (it committed after its lease ended). Nothing was written.
 */
export class OrderChangedError extends ConflictException {
  constructor(orderId: string) {
    super(`Order ${orderId} changed while this payment ran; nothing was written. Retry to pay the next installment.`);
  }
}
