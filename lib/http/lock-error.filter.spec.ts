import type { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import { firstValueFrom, isObservable } from 'rxjs';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockErrorFilter } from './lock-error.filter.js';

function hostOf(type: string, client?: object): ArgumentsHost {
  return {
    getType: () => type,
    switchToWs: () => ({ getClient: () => client }),
    switchToHttp: () => ({ getResponse: () => ({}) }),
  } as unknown as ArgumentsHost;
}

describe('LockErrorFilter outside HTTP', () => {
  const filter = new LockErrorFilter({ httpAdapter: undefined } as unknown as HttpAdapterHost);
  const error = new LockNotAcquiredError('order:1', 0);

  it('returns nothing for GraphQL and other external contexts, so Nest rethrows the typed error', () => {
    expect(filter.catch(error, hostOf('graphql'))).toBeUndefined();
  });

  it('gives RPC clients an error object with the stable code', async () => {
    const result = filter.catch(error, hostOf('rpc'));
    expect(isObservable(result)).toBe(true);
    await expect(firstValueFrom(result!)).rejects.toEqual(expect.objectContaining({ status: 'error', code: 'LOCK_NOT_ACQUIRED' }));
  });

  it('emits an exception event to WebSocket clients', () => {
    const emitted: unknown[] = [];
    filter.catch(error, hostOf('ws', { emit: (event: string, data: unknown) => emitted.push([event, data]) }));
    expect(emitted).toEqual([['exception', expect.objectContaining({ code: 'LOCK_NOT_ACQUIRED' })]]);
  });
});
