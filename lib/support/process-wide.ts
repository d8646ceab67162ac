/**
 * State that must be one per process, not one per copy of this package. An application can load the
 * package twice — its CommonJS build through one import path and its ESM build through another — and a
 * module-level variable would then exist twice: a lock taken through one copy would not see a transaction
 * marked through the other and would be released before COMMIT. Everything kept here is keyed in the
 * global symbol registry on purpose; everything else stays per application.
 */
export function processWide<T>(name: string, create: () => T): T {
  // The shape of what is kept here is versioned: copies of different versions share nothing rather than
  // each other's incompatible state. Bump it whenever the shape of a kept value changes.
  const slot = Symbol.for(`nestjs-distributed-lock:state-v1:${name}`);
  const registry = globalThis as Record<symbol, unknown>;
  if (!(slot in registry)) registry[slot] = create();
  return registry[slot] as T;
}
