import { exactNumberOf, hexOf, statOf } from './zookeeper-client-adapter';

function long(value: bigint): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(value);
  return buffer;
}

describe("node-zookeeper-client's 64-bit fields", () => {
  it('reads a zxid exactly, epoch and counter alike, up to the largest safe integer', () => {
    expect(exactNumberOf(long((7n << 32n) | 0xfffffffen), 'czxid')).toBe(7 * 2 ** 32 + 0xfffffffe);
    expect(exactNumberOf(long(BigInt(Number.MAX_SAFE_INTEGER)), 'czxid')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses a zxid a number would round (two grants could share a token) or a negative one', () => {
    expect(() => exactNumberOf(long(BigInt(Number.MAX_SAFE_INTEGER) + 1n), 'czxid')).toThrow(RangeError);
    expect(() => exactNumberOf(long(-1n), 'czxid')).toThrow(RangeError);
  });

  it("gives session ids and ephemeral owners the same hex, '0' for a persistent node", () => {
    const session = long(0x1000a2b3c4d0001n);
    expect(hexOf(session)).toBe('1000a2b3c4d0001');
    expect(statOf({ czxid: long(5n), version: 2, ephemeralOwner: session })).toEqual({ czxid: 5, version: 2, ephemeralOwner: '1000a2b3c4d0001' });
    expect(statOf({ czxid: long(5n), version: 0, ephemeralOwner: long(0n) }).ephemeralOwner).toBe('0');
  });
});
