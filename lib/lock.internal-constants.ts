/** The validated module options; internal, users configure through forRoot/forRootAsync. */
export const RESOLVED_LOCK_OPTIONS = Symbol('ResolvedLockOptions');
