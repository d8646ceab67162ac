/** Stops the run's private redis-server by pid (global setup and teardown share no objects, only env). */
export default async function globalTeardown(): Promise<void> {
  const pid = Number(process.env.LOCK_TEST_REDIS_PID);
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
