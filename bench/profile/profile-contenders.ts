import { CONTENDERS } from '../adapters/contenders.js';
import type { Contender } from '../adapters/lock-adapter.js';

export function contenderById(id: string): Contender {
  const contender = CONTENDERS.find((candidate) => candidate.id === id);
  if (!contender) throw new Error(`no contender ${id}: one of ${CONTENDERS.map((c) => c.id).join(', ')}`);
  return contender;
}
