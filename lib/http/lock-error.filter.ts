import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { throwError, type Observable } from 'rxjs';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import type { LockError } from '../errors/lock.error.js';
import { StaleFencingTokenError } from '../errors/stale-fencing-token.error.js';
import { lockErrorResponse } from './lock-error.responses.js';

/**
 * Gives lock errors the HTTP status a client can act on (see `lockErrorResponse` for the table): 409 for
 * a held or taken-over resource, 503 with `Retry-After` when the lock store is out, 400 for a request
 * value that cannot name a resource. `DistributedLockModule` registers it as a global filter (APP_FILTER),
 * so no user code is needed; business errors never reach it (it catches only these lock errors).
 *
 * Other transports get a typed error, not an HTTP answer:
 * - `rpc`: the error object microservice clients receive, `{ status: 'error', code, message }`;
 * - `ws`: an `exception` event with the same object, as Nest's own WebSocket filter sends;
 * - anything else (GraphQL, cron jobs, plain service calls, which never reach filters): returns nothing,
 *   so Nest rethrows the original error.
 *
 * Filters bound to a controller or method, and global filters added with `app.useGlobalFilters()`, take
 * precedence over this one.
 */
@Catch(LockNotAcquiredError, LockStoreUnavailableError, LockKeyError, LeaseLostError, StaleFencingTokenError)
export class LockErrorFilter implements ExceptionFilter<LockError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: LockError, host: ArgumentsHost): Observable<never> | undefined {
    const response = lockErrorResponse(error);
    const type = host.getType<string>();
    if (type === 'http') {
      const adapter = this.adapterHost.httpAdapter;
      const reply: unknown = host.switchToHttp().getResponse();
      if (adapter.isHeadersSent(reply)) {
        adapter.end(reply);
        return undefined;
      }
      // Every class this filter catches has an answer; the fallback only keeps an unexpected one a plain 500.
      if (!response) {
        adapter.reply(reply, { statusCode: 500, message: 'Internal server error' }, 500);
        return undefined;
      }
      if (response.retryAfterSeconds !== undefined) adapter.setHeader(reply, 'Retry-After', String(response.retryAfterSeconds));
      adapter.reply(reply, response.body, response.body.statusCode);
      return undefined;
    }
    const payload = { status: 'error', code: response?.body.code ?? error.code, message: response?.body.message ?? error.message };
    if (type === 'rpc') return throwError(() => payload);
    if (type === 'ws') {
      const client = host.switchToWs().getClient<{ emit?: (event: string, data: unknown) => unknown } | undefined>();
      client?.emit?.('exception', payload);
      return undefined;
    }
    return undefined;
  }
}

/** @deprecated The same filter under its first name. */
export { LockErrorFilter as LockNotAcquiredFilter };
