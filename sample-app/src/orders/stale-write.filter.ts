import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LeaseLostError, StaleFencingTokenError } from 'nestjs-distributed-lock';

/** What a client receives when the database refused its write for an older fencing token. */
export interface StaleWriteBody {
  readonly statusCode: 409;
  readonly code: 'STALE_FENCING_TOKEN';
  readonly message: string;
}

/**
 * A write the fencing check refused is a conflict the client can act on (it lost the race to a newer lock
 * holder), not a server error: 409 with code STALE_FENCING_TOKEN. A locked call whose lease was lost ends
 * in `LeaseLostError` with the refusal as its cause; that is the same refusal. Any other lost lease is a
 * 500 that says so.
 */
@Catch(StaleFencingTokenError, LeaseLostError)
export class StaleWriteFilter implements ExceptionFilter<StaleFencingTokenError | LeaseLostError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: StaleFencingTokenError | LeaseLostError, host: ArgumentsHost): void {
    const { httpAdapter } = this.adapterHost;
    const response: unknown = host.switchToHttp().getResponse();
    const refusal = error instanceof StaleFencingTokenError ? error : error.cause instanceof StaleFencingTokenError ? error.cause : undefined;
    if (refusal) {
      const body: StaleWriteBody = { statusCode: 409, code: 'STALE_FENCING_TOKEN', message: refusal.message };
      httpAdapter.reply(response, body, HttpStatus.CONFLICT);
      return;
    }
    httpAdapter.reply(response, { statusCode: 500, code: error.code, message: error.message }, HttpStatus.INTERNAL_SERVER_ERROR);
  }
}
