import { nothingHeldLine } from './prefix-hint';

describe('the line list prints when nothing is held under the prefix', () => {
  it('is the plain line when the store cannot look elsewhere, or found nothing anywhere', () => {
    expect(nothingHeldLine('lock:', undefined, undefined)).toBe("no held locks under 'lock:'");
    expect(nothingHeldLine('lock:', 'order:*', { prefixes: [], complete: true })).toBe("no held locks matching 'order:*' under 'lock:'");
  });

  it('says "at least" and that there may be more when the look stopped at its bound', () => {
    const line = nothingHeldLine('lock:', undefined, { prefixes: [{ prefix: 'shop:lock:', held: 2 }], complete: false });
    expect(line).toBe("no held locks under 'lock:'; at least 2 held under 'shop:lock:' (the look stopped at its bound: there may be more) — did you mean --prefix shop:lock:?");
    expect(nothingHeldLine('lock:', undefined, { prefixes: [], complete: false })).toBe("no held locks under 'lock:' (none elsewhere in the part of the keyspace looked at)");
  });

  it('quotes a suggested prefix the shell would split, and escapes what a terminal would act on', () => {
    const line = nothingHeldLine('lock:', undefined, { prefixes: [{ prefix: "my app's\u001b[2J:", held: 1 }], complete: true });
    expect(line).not.toContain('\u001b');
    expect(line).toMatch(/did you mean --prefix 'my app'\\''s\\u001b\[2J:'\?$/);
  });
});
