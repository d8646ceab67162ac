import 'reflect-metadata';
import { SetMetadata } from '@nestjs/common';
import { LockConfigError } from '../errors/lock-config.error.js';
import { LockNotBoundError } from '../errors/lock-not-bound.error.js';
import { DistributedLock } from './distributed-lock.decorator.js';
import { LOCKED_METHOD } from '../lock.internal-constants.js';
import { ownLockedMethod } from './locked-method.js';

const Tag = (value: string): MethodDecorator => SetMetadata('tag', value);

describe('@DistributedLock at decoration time', () => {
  it('replaces the prototype method with a wrapper that keeps name and length', () => {
    class Orders {
      @DistributedLock('order:{orderId}')
      async pay(orderId: string, amount: number): Promise<number> {
        return amount;
      }
    }
    const method = ownLockedMethod(Orders.prototype, 'pay')!;
    expect(Orders.prototype.pay).not.toBe(method.source);
    expect(method.source.toString()).toMatch(/^async pay\(orderId, amount\)/);
    expect(Orders.prototype.pay.name).toBe('pay');
    expect(Orders.prototype.pay.length).toBe(2);
    expect(Reflect.getOwnMetadata(LOCKED_METHOD, Orders.prototype.pay)).toBe(method);
  });

  it('keeps metadata of decorators below and above it', () => {
    class Jobs {
      @Tag('above')
      @DistributedLock('job:a')
      async above(): Promise<void> {}

      @DistributedLock('job:b')
      @Tag('below')
      async below(): Promise<void> {}
    }
    expect(Reflect.getMetadata('tag', Jobs.prototype.above)).toBe('above');
    expect(Reflect.getMetadata('tag', Jobs.prototype.below)).toBe('below');
    expect(ownLockedMethod(Jobs.prototype, 'above')).toBeDefined();
    expect(ownLockedMethod(Jobs.prototype, 'below')).toBeDefined();
  });

  it('rejects properties, accessors and static methods at once, naming the member', () => {
    const decorate = DistributedLock('k') as unknown as (target: object, key: string, descriptor?: PropertyDescriptor) => void;
    class Target {
      static async run(): Promise<void> {}
      get value(): number {
        return 1;
      }
    }
    expect(() => decorate(Target.prototype, 'field')).toThrow(LockConfigError);
    expect(() => decorate(Target.prototype, 'field')).toThrow(/Target\.field/);
    expect(() => decorate(Target.prototype, 'value', Object.getOwnPropertyDescriptor(Target.prototype, 'value'))).toThrow(
      /accessor/,
    );
    expect(() => decorate(Target.prototype, 'data', { value: 42, writable: true })).toThrow(/a property holding number/);
    expect(() => decorate(Target, 'run', Object.getOwnPropertyDescriptor(Target, 'run'))).toThrow(/static method/);
  });

  it('rejects a second @DistributedLock on the same method', () => {
    expect(() => {
      class Twice {
        @DistributedLock('a')
        @DistributedLock('b')
        async run(): Promise<void> {}
      }
      return Twice;
    }).toThrow(/one @DistributedLock per method/);
  });

  it('types key functions and fallbacks against the method (checked by tsc)', () => {
    class Typed {
      @DistributedLock({ key: (orderId: string) => `order:${orderId}`, onLocked: (orderId: string) => orderId })
      async ship(orderId: string, express: boolean): Promise<void> {}

      // @ts-expect-error: the key function takes a string, the method a number
      @DistributedLock({ key: (orderId: string) => `order:${orderId}` })
      async cancel(orderId: number): Promise<void> {}
    }
    expect(ownLockedMethod(Typed.prototype, 'ship')).toBeDefined();
  });

  it('fails a call on an instance no application bound, without running the method', async () => {
    let ran = false;
    class Loose {
      @DistributedLock('loose')
      async run(): Promise<void> {
        ran = true;
      }
    }
    await expect(new Loose().run()).rejects.toThrow(LockNotBoundError);
    await expect(new Loose().run()).rejects.toThrow(/Loose\.run.*did not run.*app\.init\(\)/);
    const detached = new Loose().run;
    await expect(detached()).rejects.toThrow(/without an instance/);
    expect(ran).toBe(false);
  });
});
