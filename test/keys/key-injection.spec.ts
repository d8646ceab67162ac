import { Injectable } from '@nestjs/common';
import { DistributedLock, encodeKeySegment, LockKeyError, LockService } from '../../lib/index';
import { decodeKeySegment } from '../../lib/keys/key-segment.encoding';
import { gate, inspectionClient, keysUnder, redisLock, startLockedApp, type LockedApp } from '../decorator/locked-app';
import { testPrefix } from '../support/test-prefix';

const PREFIX = testPrefix(__filename);

interface RefundDto {
  order: { id: unknown };
}

@Injectable()
class RefundService {
  hook?: (orderId: unknown) => Promise<void>;
  readonly ran: unknown[][] = [];

  constructor(private readonly locks: LockService) {}

  @DistributedLock({ key: 'order:{dto.order.id}:line:{lineNo}', waitMs: 0 })
  async refund(dto: RefundDto, lineNo: unknown): Promise<string> {
    this.ran.push([dto, lineNo]);
    await this.hook?.(dto.order.id);
    return this.locks.current()!.key;
  }

  @DistributedLock({ key: (orderId: string) => `ship:${encodeKeySegment(orderId)}`, waitMs: 0 })
  async ship(orderId: string): Promise<string> {
    return this.locks.current()!.key;
  }

  @DistributedLock({ key: (raw: unknown) => raw as string, waitMs: 0 })
  async rawKey(raw: unknown): Promise<void> {
    this.ran.push(['rawKey', raw]);
  }
}

const ADVERSARIAL: Array<[unknown, unknown]> = [
  ['1', 2],
  ['1:line:2', 'x'],
  ['1', '2:line:x'],
  ['1%3Aline%3A2', 'x'],
  ['{1}', 2],
  ['1}:{2', 2],
  ['*', 2],
  ['1*', 2],
  ['1\n', 2],
  ['1\r\nSET x y', 2],
  ['#fence:{0}', 2],
  ['é', 2],
  ['e\u0301', 2],
  ['订单', 2],
  ['😀', 2],
  [' ', 2],
  ['../..', 2],
  ['1', '2 '],
  [12345678901234567890n, 2],
];

describe('key templates against a real Redis: adversarial argument values', () => {
  const redis = inspectionClient();
  let app: LockedApp;
  let refunds: RefundService;

  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(PREFIX), providers: [RefundService] });
    refunds = app.get(RefundService);
  });

  afterAll(async () => {
    await app?.close();
    redis.disconnect();
  });

  afterEach(() => {
    refunds.hook = undefined;
  });

  it('gives every argument tuple its own key, inside the template namespace, decodable back to the arguments', async () => {
    const seen = new Map<string, string>();
    for (const [orderId, lineNo] of ADVERSARIAL) {
      let inRedis: string[] = [];
      refunds.hook = async () => {
        inRedis = await keysUnder(redis, PREFIX);
      };
      const key = await refunds.refund({ order: { id: orderId } }, lineNo);
      // Exactly one key in Redis while the call ran: the module prefix + the template result.
      expect(inRedis).toEqual([`${PREFIX}${key}`]);
      const parts = /^order:([A-Za-z0-9_.%-]+):line:([A-Za-z0-9_.%-]+)$/.exec(key);
      expect(parts).not.toBeNull();
      expect([decodeKeySegment(parts![1]!), decodeKeySegment(parts![2]!)]).toEqual([String(orderId), String(lineNo)]);
      expect(seen.get(key)).toBeUndefined();
      seen.set(key, JSON.stringify([String(orderId), String(lineNo)]));
    }
  });

  it('lets two tuples that would collide under naive interpolation hold their locks at the same time', async () => {
    const inA = gate();
    const inB = gate();
    // Each call waits inside its lock until the other is inside its own: only possible with two keys.
    refunds.hook = async (orderId) => (orderId === '1' ? (inA.open(), inB.promise) : (inB.open(), inA.promise));
    const [a, b] = await Promise.all([
      refunds.refund({ order: { id: '1' } }, '2:line:x'),
      refunds.refund({ order: { id: '1:line:2' } }, 'x'),
    ]);
    expect(a).not.toBe(b);
  });

  it.each([
    ['undefined', undefined, /\{dto\.order\.id\} is undefined/],
    ['null', null, /\{dto\.order\.id\} is null/],
    ["''", '', /\{dto\.order\.id\} is an empty string/],
    ['an object', { id: 7 }, /\{dto\.order\.id\} is an object/],
    ['an array', [7], /\{dto\.order\.id\} is an array/],
  ])('rejects %s at call time with LockKeyError naming the placeholder, before any Redis call', async (_name, value, message) => {
    const ranBefore = refunds.ran.length;
    const acquiredBefore = app.recorded('acquired').length;
    const error = await refunds.refund({ order: { id: value } }, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain('RefundService.refund');
    expect((error as Error).message).not.toMatch(/order:undefined|\[object Object\]/);
    expect(refunds.ran.length).toBe(ranBefore);
    expect(app.recorded('acquired').length).toBe(acquiredBefore);
    expect(await keysUnder(redis, PREFIX)).toEqual([]);
  });

  it('rejects a missing intermediate object on a nested path, naming where the path broke', async () => {
    const error = await refunds.refund({} as RefundDto, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(/dto\.order is undefined/);
  });

  it('rejects keys over the limit once encoded', async () => {
    await expect(refunds.refund({ order: { id: ':'.repeat(200) } }, 1)).rejects.toThrow(/limit is 512 bytes/);
    await expect(refunds.refund({ order: { id: 'x'.repeat(600) } }, 1)).rejects.toThrow(LockKeyError);
  });

  it('refuses a value too long for any key before encoding it (a 4 MB argument must not block the event loop)', async () => {
    const huge = 'é'.repeat(4 * 1024 * 1024);
    // Encoding escapes a character at a time through Buffer.from: counting those calls shows whether it ran.
    const bufferFrom = jest.spyOn(Buffer, 'from');
    try {
      await expect(refunds.refund({ order: { id: huge } }, 1)).rejects.toThrow(/limit is 512 bytes/);
      expect(() => encodeKeySegment(huge)).toThrow(LockKeyError);
      expect(bufferFrom.mock.calls.length).toBeLessThan(1_000);
    } finally {
      bufferFrom.mockRestore();
    }
  });

  it('supports the typed function form, with encodeKeySegment for hand-built keys', async () => {
    await expect(refunds.ship('a:b{c}')).resolves.toBe('ship:a%3Ab%7Bc%7D');
  });

  it.each([
    ['an empty string', ''],
    ['a non-string', 42],
    ['a reserved "#" key', '#fence:{x}'],
    ['control characters', 'a\nb'],
    ['a key over the limit', 'k'.repeat(513)],
  ])('rejects a key function returning %s, naming the method', async (_name, raw) => {
    const error = await refunds.rawKey(raw).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(/key function of RefundService\.rawKey/);
    expect(refunds.ran.filter((entry) => entry[0] === 'rawKey')).toEqual([]);
  });
});

@Injectable()
class BatchService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock({ key: 'tenant:{tenant}:batch:{ids.1}', waitMs: 0 })
  async second(tenant: string, ...ids: string[]): Promise<string> {
    return this.locks.current()!.key;
  }
}

describe('key templates on a rest parameter', () => {
  let app: LockedApp;
  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(`${PREFIX}rest:`), providers: [BatchService] });
  });
  afterAll(() => app?.close());

  it('binds {ids.1} to the second element of the rest arguments, not to a character of the first', async () => {
    expect(await app.get(BatchService).second('acme', 'first-id', 'second-id')).toBe('tenant:acme:batch:second-id');
  });

  it('rejects a missing rest element instead of building a key from nothing', async () => {
    await expect(app.get(BatchService).second('acme', 'only-one')).rejects.toBeInstanceOf(LockKeyError);
  });
});
