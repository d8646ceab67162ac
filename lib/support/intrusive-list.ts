/** The links a node of an {@link IntrusiveList} carries itself. */
export interface ListNode<N> {
  prev: N | undefined;
  next: N | undefined;
  /** True while the node is in a list. */
  listed: boolean;
}

/**
 * A doubly linked list whose links live on the nodes, oldest first: adding and removing cost no allocation
 * and no hashing, which is why the hot paths keep one (every acquisition is watched and unwatched once,
 * every Redis command is tracked until answered).
 *
 * Removing a node keeps its `next`, so a walk standing on it (or about to step onto it) goes on from there:
 * removing any node during a walk is safe, removed nodes are skipped. A caller that never walks while
 * others remove may clear `next` itself, so a removed node that is still referenced holds nothing alive.
 */
export class IntrusiveList<N extends ListNode<N>> {
  private head?: N;
  private tail?: N;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Appends `node`, which must not be in a list. */
  push(node: N): void {
    node.prev = this.tail;
    node.next = undefined;
    node.listed = true;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.count++;
  }

  /** Unlinks `node` if it is listed; its `next` is kept (see the class comment). */
  remove(node: N): void {
    if (!node.listed) return;
    const { prev, next } = node;
    if (prev) prev.next = next;
    else this.head = next;
    if (next) next.prev = prev;
    else this.tail = prev;
    node.prev = undefined;
    node.listed = false;
    this.count--;
  }

  clear(): void {
    for (let node = this.head; node; node = node.next) node.listed = false;
    this.head = this.tail = undefined;
    this.count = 0;
  }

  /** Every listed node, oldest first; removing any node meanwhile is safe. */
  *[Symbol.iterator](): IterableIterator<N> {
    let node = this.head;
    while (node) {
      if (node.listed) yield node;
      node = node.next;
    }
  }
}
