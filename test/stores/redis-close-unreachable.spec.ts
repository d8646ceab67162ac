import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../scripts/servers/redis-server';

/**
 * `app.close()` with Redis unreachable: nothing printed by ioredis ("Unhandled error event: ECONNREFUSED",
 * 2–4 times before), and no timer or socket left that keeps the process alive (a client that never got
 * connected left a 2 s reconnect timer behind).
 */
describe('closing an application whose Redis is unreachable', () => {
  it('prints nothing and leaves nothing that keeps the process alive', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const child = spawnSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), join(__dirname, 'workers/close-unreachable.worker.ts'), url], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).not.toContain('Unhandled error event');
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { left: string[] };
    expect(report.left).toEqual([]);
    expect(child.status).toBe(0);
  });
});
