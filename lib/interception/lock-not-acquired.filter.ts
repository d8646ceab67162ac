import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { throwError, type Observable } from 'rxjs';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';

/** What a client receives when a locked call could not get its lock. */
export interface LockConflictBody {
  readonly statusCode: 409;
  readonly error: 'Conflict';
  readonly code: 'LOCK_NOT_ACQUIRED';
  readonly message: string;
}

/**
 * Turns `LockNotAcquiredError` into 409 Conflict for HTTP clients. `DistributedLockModule` registers it as a
 * global filter (APP_FILTER), so no user code is needed.
 *
 * It catches nothing else, and leaves every other transport its typed error:
 * - `http` (Express or Fastify): 409 with a JSON body ({@link LockConflictBody}); the key is not included,
 *   since it may carry internal identifiers.
 * - `rpc`: the error object microservice clients receive, `{ status: 'error', code, message }`.
 * - `ws`: an `exception` event with the same object, as Nest's own WebSocket filter sends.
 * - anything else (GraphQL, cron jobs, plain service calls, which never reach filters): returns nothing,
 *   so Nest rethrows the original `LockNotAcquiredError`.
 *
 * Filters bound to a controller or method, and global filters added with `app.useGlobalFilters()`, take
 * precedence over this one.
 */
@Catch(LockNotAcquiredError)
export class LockNotAcquiredFilter implements ExceptionFilter<LockNotAcquiredError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: LockNotAcquiredError, host: ArgumentsHost): Observable<never> | undefined {
    const type = host.getType<string>();
    if (type === 'http') {
      const adapter = this.adapterHost.httpAdapter;
      const response: unknown = host.switchToHttp().getResponse();
      if (adapter.isHeadersSent(response)) adapter.end(response);
      else adapter.reply(response, conflictBody(), HttpStatus.CONFLICT);
      return undefined;
    }
    const payload = { status: 'error', code: error.code, message: conflictBody().message };
    if (type === 'rpc') return throwError(() => payload);
    if (type === 'ws') {
      const client = host.switchToWs().getClient<{ emit?: (event: string, data: unknown) => unknown } | undefined>();
      client?.emit?.('exception', payload);
      return undefined;
    }
    return undefined;
  }
}

function conflictBody(): LockConflictBody {
  return {
    statusCode: 409,
    error: 'Conflict',
    code: 'LOCK_NOT_ACQUIRED',
    message: 'The resource is locked by another operation in progress; retry later.',
  };
}
