import { randomUUID } from 'node:crypto';

/**
 * A fresh ownership token per acquisition attempt: 122 random bits. randomUUID draws from a cached entropy
 * pool; randomBytes would cost a syscall per lease.
 */
export const newToken = (): string => randomUUID();
