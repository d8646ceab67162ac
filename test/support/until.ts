/**
 * Resolves once `condition` holds, asking again on the next turn of the event loop: a test waits on what it
 * needs to see (a queue entry, a BUSY reply), never on a sleep guessed long enough. Jest's timeout bounds it.
 */
export async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}
