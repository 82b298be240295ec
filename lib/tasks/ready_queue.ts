/** A binary min-heap of task ids ordered by (priority, creation order), with lazy deletion. */

/** One queued entry. */
export interface QueueEntry {
  id: string;
  priority: number;
  seq: number;
}

function less(a: QueueEntry, b: QueueEntry): boolean {
  return a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq);
}

/** Ready tasks, lowest priority number first, then oldest. Stale entries are skipped on pop. */
export class ReadyQueue {
  #heap: QueueEntry[] = [];

  /** Number of entries, stale ones included. */
  get size(): number {
    return this.#heap.length;
  }

  /** Add an entry. */
  push(entry: QueueEntry): void {
    const h = this.#heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  /** Remove and return the first entry for which `valid` holds, dropping stale ones. */
  popValid(valid: (entry: QueueEntry) => boolean): QueueEntry | undefined {
    while (this.#heap.length > 0) {
      const top = this.#pop();
      if (valid(top)) return top;
    }
    return undefined;
  }

  #pop(): QueueEntry {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}
