import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

export interface Environment {
  readonly startedAt: string;
  readonly machine: { os: string; cpuModel: string; cores: number; memoryGiB: number; loadAverage1m: number };
  readonly node: string;
  readonly redis: { version: string; url: string; private: boolean };
  /** Versions of the packages under test, read from node_modules (what actually ran, not the range). */
  readonly packages: Record<string, string>;
}

const REPO_ROOT = join(__dirname, '..', '..');

export function installedVersion(packageName: string): string {
  try {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', packageName, 'package.json'), 'utf8'));
    return String(manifest.version);
  } catch {
    return 'not installed';
  }
}

export async function describeEnvironment(
  admin: Redis,
  redis: { url: string; private: boolean },
  packageNames: readonly string[],
): Promise<Environment> {
  const server = await admin.info('server');
  const cpu = cpus();
  return {
    startedAt: new Date().toISOString(),
    machine: {
      os: `${osType()} ${release()}`,
      cpuModel: cpu[0]?.model.trim() ?? 'unknown',
      cores: cpu.length,
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      // Other work on a shared machine shows up here; read ratios, not absolute numbers, when it is high.
      loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
    },
    node: process.version,
    redis: { version: /redis_version:(\S+)/.exec(server)?.[1] ?? 'unknown', url: redactUrl(redis.url), private: redis.private },
    packages: Object.fromEntries(
      [...new Set(['nestjs-distributed-lock', 'ioredis', '@nestjs/core', ...packageNames])].map((name) => [
        name,
        name === 'nestjs-distributed-lock' ? `${ownVersion()} (TypeScript sources)` : installedVersion(name),
      ]),
    ),
  };
}

function ownVersion(): string {
  return String(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version);
}

/** A REDIS_URL may carry a password; the result files must not. */
function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}
