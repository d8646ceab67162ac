/**
 * Resolves once `condition` holds, asking again on the next turn of the event loop: a test waits on what it
 * needs to see (a queue entry, a BUSY reply), never on a sleep guessed long enough. Jest's timeout bounds it.
 */
export async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Polls a condition a server exposes (a queue's length, a count of watches) every 10 ms, naming `what` it
 * waited for when it gives up after `withinMs`: a test waits on what it needs to see, not on a guessed sleep.
 */
export async function untilSeen(condition: () => Promise<boolean>, what: string, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
