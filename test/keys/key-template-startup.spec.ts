import { Injectable, type Type } from '@nestjs/common';
import { DistributedLock, LockConfigError } from '../../lib/index';
import { redisLock, startLockedApp } from '../decorator/locked-app';
import { moduleStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';

const PREFIX = testPrefix(__filename);

/** A fresh provider class whose `pay` method is locked with `template`. */
function paymentsLockedWith(template: string): Type<unknown> {
  @Injectable()
  class Payments {
    @DistributedLock(template)
    async pay(orderId: string, amount: number): Promise<void> {}
  }
  return Payments;
}

@Injectable()
class DestructuringRefunds {
  @DistributedLock('refund:{id}')
  async refund({ id }: { id: string }): Promise<void> {}
}

describe('bad key templates stop the application at startup', () => {
  it.each([
    ['a placeholder naming no parameter', 'order:{ordrId}', /\{ordrId\} names none/],
    ['an unclosed brace', 'order:{orderId', /closing "}"/],
    ['a stray closing brace', 'order:}', /closes nothing/],
    ['an empty placeholder', 'order:{}', /not a parameter path/],
    ['a malformed path', 'order:{orderId.}', /not a parameter path/],
    ['adjacent placeholders', 'order:{orderId}{amount}', /separated by a character/],
    ['an empty template', '', /non-empty template/],
    ['a reserved prefix', '#order:{orderId}', /reserved/],
    ['control characters', 'order:\t{orderId}', /control characters/],
  ])('%s', async (_name, template, message) => {
    const error = await moduleStartError(redisLock(PREFIX), { providers: [paymentsLockedWith(template)] });
    expect(error).toBeInstanceOf(LockConfigError);
    const text = (error as Error).message;
    expect(text).toMatch(message);
    // Names class, method and template.
    expect(text).toContain('Payments.pay');
    expect(text).toContain(JSON.stringify(template));
  });

  it('a placeholder naming a destructured parameter', async () => {
    const error = await moduleStartError(redisLock(PREFIX), { providers: [DestructuringRefunds] });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(/DestructuringRefunds\.refund.*"refund:\{id\}".*refund\(<destructured>\)/);
  });

  it('a good template starts', async () => {
    const app = await startLockedApp({ lock: redisLock(PREFIX), providers: [paymentsLockedWith('order:{orderId}:amount:{amount}')] });
    await app.close();
  });
});
