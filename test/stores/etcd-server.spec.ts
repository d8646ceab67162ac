import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from './etcd-test-support';

/** Alive and not a zombie (a killed orphan lingers as one until its new parent reaps it). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

describe('the test etcd server (scripts/servers/etcd-server)', () => {
  it('dies with the test process that started it, even when that process never stopped it', async () => {
    // A process that starts a member, reports its pid, and exits without calling stop() (a crashed worker).
    const script = `
      const { startEtcdCluster } = require(${JSON.stringify(join(__dirname, '../../scripts/servers/etcd-server.ts'))});
      startEtcdCluster().then((cluster) => {
        console.log(JSON.stringify({ pid: cluster.members[0].pid }));
        process.exit(0);
      });
    `;
    // The data dir, which nobody removes after such an exit, goes into a directory of this test's own.
    const tmp = mkdtempSync(join(tmpdir(), 'etcd-exit-'));
    try {
      const output = execFileSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), '-e', script], {
        encoding: 'utf8',
        env: { ...process.env, TMPDIR: tmp },
      });
      const { pid } = JSON.parse(output.trim().split('\n').pop()!) as { pid: number };
      expect(pid).toBeGreaterThan(0);
      await pollUntil(async () => !isRunning(pid), `etcd (pid ${pid}) to be gone`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
