import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** libfaketime as Debian installs it (`dpkg -L libfaketime`): /usr/lib/<multiarch>/faketime/libfaketime.so.1. */
export function findLibfaketime(): string | undefined {
  const multiarch = existsSync('/usr/lib') ? readdirSync('/usr/lib').map((dir) => join('/usr/lib', dir)) : [];
  return ['/usr/lib', '/usr/local/lib', ...multiarch].map((dir) => join(dir, 'faketime', 'libfaketime.so.1')).find((path) => existsSync(path));
}

/**
 * The clock of one redis-server, moved while it runs: libfaketime reads the offset from a file (relative to
 * the real clock, "+0" at first) on every clock call (FAKETIME_NO_CACHE), and `jump` rewrites the file.
 *
 * Two settings are what make it a clock step as an NTP step or `date -s` makes one, measured on Redis 7.0:
 * - FAKETIME_DONT_FAKE_MONOTONIC: a step moves CLOCK_REALTIME only. Redis expires keys by the wall clock
 *   (with it alone faked, a key expires as soon as the clock passes its deadline), and runs its timers on
 *   the monotonic clock; faked too, a backward jump stalled serverCron: 50 keys of 100 ms were still there
 *   2 s later, none expired (with the setting, all 50).
 * - libc.so.6 preloaded after libfaketime: libfaketime and jemalloc deadlock each other (libfaketime issue
 *   #130). A library constructor's malloc initialises jemalloc before libfaketime's own constructor ran;
 *   jemalloc reads the clock, libfaketime initialises on that call and its dlsym mallocs again, inside
 *   jemalloc's init lock: redis-server hangs before it listens. With glibc first in the lookup order,
 *   malloc is glibc's and jemalloc (only reached by redis' allocator statistics) starts later, when
 *   libfaketime is ready. Key expiry does not depend on the allocator.
 */
export class FakedClock {
  readonly env: NodeJS.ProcessEnv;
  private readonly dir: string;
  private readonly file: string;

  constructor(library: string) {
    this.dir = mkdtempSync(join(tmpdir(), 'lock-faketime-'));
    this.file = join(this.dir, 'offset');
    this.write('+0');
    this.env = { LD_PRELOAD: `${library} libc.so.6`, FAKETIME_TIMESTAMP_FILE: this.file, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
  }

  /** Sets the server's clock `offsetSeconds` from the real one (a whole number: libfaketime's offset syntax). */
  jump(offsetSeconds: number): void {
    this.write(`${offsetSeconds < 0 ? '-' : '+'}${Math.abs(offsetSeconds)}`);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Whole, never half-written: the server reads the file on every clock call. */
  private write(offset: string): void {
    writeFileSync(`${this.file}.next`, `${offset}\n`);
    renameSync(`${this.file}.next`, this.file);
  }
}

/** Polls a condition only a server shows (its clock, a key's copy), not a guessed sleep. */
export async function until(condition: () => Promise<boolean>, what: string, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
