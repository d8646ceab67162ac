/**
 * True when `pending` settled (either way) within `withinMs`, false when the time ran out first. For close
 * paths that must finish whatever a server does; the timer does not keep the process alive.
 */
export async function settlesWithin(pending: Promise<unknown>, withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
    timer.unref();
  });
  try {
    return await Promise.race([pending.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
