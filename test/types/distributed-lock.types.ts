/**
 * Type tests for `@DistributedLock`, compiled by `npm run typecheck` (part of `npm test`) under `strict`:
 * every `@ts-expect-error` line must fail to compile, every other line must compile.
 */
import { DistributedLock } from '../../lib/index';

interface PayDto {
  orderId: string;
  amount: number;
  currency: string;
}

export class Accepted {
  @DistributedLock('order:{orderId}')
  async template(orderId: string): Promise<void> {}

  @DistributedLock({ key: (orderId: string) => `order:${orderId}` })
  async leading(orderId: string, amount: number): Promise<void> {}

  // A key function may take a wider type than the method passes.
  @DistributedLock({ key: (dto: { orderId: string }) => `order:${dto.orderId}` })
  async narrowerObject(dto: PayDto): Promise<void> {}

  @DistributedLock({ key: () => 'job:nightly' })
  async noParameters(): Promise<void> {}

  @DistributedLock({ key: (orderId: string) => `order:${orderId}`, onLocked: (orderId: string) => `busy ${orderId}` })
  async withFallback(orderId: string): Promise<string> {
    return orderId;
  }

  @DistributedLock({ keys: ['account:{from}', 'account:{to}'], waitMs: 1_000 })
  async severalKeys(from: string, to: string): Promise<void> {}

  @DistributedLock({ keys: (from: string, to: string) => [`account:${from}`, `account:${to}`] })
  async keysFunction(from: string, to: string): Promise<void> {}
}

export class Rejected {
  // @ts-expect-error: the key function takes two parameters, the method passes one.
  @DistributedLock({ key: (a: string, b: string) => `x:${a}:${b}` })
  async tooFewArguments(a: string): Promise<void> {}

  // @ts-expect-error: the key function takes a string, the method passes a number.
  @DistributedLock({ key: (orderId: string) => `order:${orderId}` })
  async otherType(orderId: number): Promise<void> {}

  // @ts-expect-error: the fallback takes more than the method passes.
  @DistributedLock({ key: 'order:{id}', onLocked: (id: string, extra: number) => extra })
  async fallbackTooWide(id: string): Promise<void> {}

  // @ts-expect-error: a sync method cannot be locked.
  @DistributedLock('sync')
  sync(): number {
    return 1;
  }

  // @ts-expect-error: one key or several, not both.
  @DistributedLock({ key: 'account:{from}', keys: ['account:{to}'] })
  async keyAndKeys(from: string, to: string): Promise<void> {}

  // @ts-expect-error: the keys function takes a string, the method passes a number.
  @DistributedLock({ keys: (id: string) => [`account:${id}`] })
  async keysOtherType(id: number): Promise<void> {}
}
