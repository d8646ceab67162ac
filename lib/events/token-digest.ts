import { createHash } from 'node:crypto';

/**
 * A short, stable name for an ownership token. Logs and events carry this instead of the token, since the
 * token is what authorises releasing and extending a lease.
 */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 8);
}
