/**
 * Resolves once `condition` holds, asking again on every turn of the event loop, with no bound of its own
 * (Jest's timeout ends a test that waits forever): for what the test process itself will see change (a
 * spy's calls, a local count), not for a server. A test waits on what it needs to see, never on a sleep
 * guessed long enough.
 */
export async function spinUntil(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Polls a condition a server exposes (a queue's length, a count of watches) every 10 ms, and fails naming
 * `what` it waited for after `withinMs`: a test waits on what it needs to see, not on a guessed sleep.
 */
export async function pollUntil(condition: () => Promise<boolean>, what: string, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
