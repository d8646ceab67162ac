/** The validated module options; internal, users configure through forRoot/forRootAsync. */
export const RESOLVED_LOCK_OPTIONS = Symbol('ResolvedLockOptions');

/** Prototype metadata: `Map<propertyKey, LockedMethod>` of the methods locked on that very prototype. */
export const LOCKED_METHODS = Symbol('nestjs-distributed-lock:locked-methods');

/** Function metadata on a locked method's wrapper: its `LockedMethod`. */
export const LOCKED_METHOD = Symbol('nestjs-distributed-lock:locked-method');
