/** Async work run at most N at a time within one process, in the order it was added. */

/** Runs added work, at most `limit` at once; the rest waits its turn in order. */
export class Bounded {
  readonly #limit: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  #idle: Promise<void> = Promise.resolve();
  #settle: () => void = () => {};

  /** At most `limit` (at least 1) pieces of work run at once. */
  constructor(limit: number) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  /** Run `work` once a place is free; resolves or rejects with it. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running === 0 && this.#waiting.length === 0) {
      this.#idle = new Promise((resolve) => this.#settle = resolve);
    }
    if (this.#running >= this.#limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next(); // its place passes on: the count stays
      else if (--this.#running === 0) this.#settle();
    }
  }

  /** Resolves once nothing runs or waits. */
  idle(): Promise<void> {
    return this.#idle;
  }
}
