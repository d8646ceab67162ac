/**
 * Every store's first check of an acquisition: the ownership token is what proves a lease is one's own
 * (release, renew, extend compare it), so an empty one, which any caller can guess, is refused.
 */
export function assertOwnershipToken(token: unknown): asserts token is string {
  const problem = ownershipTokenProblem(token);
  if (problem) throw problem;
}

/** The error for a token no store accepts, or undefined: for stores that reject instead of throwing. */
export function ownershipTokenProblem(token: unknown): TypeError | undefined {
  if (typeof token === 'string' && token.length > 0) return undefined;
  return new TypeError('An ownership token must be a non-empty string (LockService makes a random one per acquisition).');
}
