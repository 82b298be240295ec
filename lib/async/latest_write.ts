/**
 * Publishing a value that changes with every decision (why a run's tasks wait) through durable
 * file writes: only the latest value is written, one write at a time and at most one write
 * started per interval, so a burst of changes costs one write, not one each. Pure of I/O: the
 * caller gives the write.
 */

/** Writes the latest of what it is given (see the module's comment). */
export class LatestWrite<T> {
  #pending: { value: T } | undefined;
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastStart = -Infinity;
  #stopped = false;

  /** `write` reports its own failures (a rejection is dropped: the next value is written). */
  constructor(
    private readonly write: (value: T) => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  /** Write `value` soon: now when no write started within the interval, else when it ends. */
  set(value: T): void {
    if (this.#stopped) return;
    this.#pending = { value };
    this.#schedule();
  }

  /** Start the next write now, or set a timer for when the interval allows it. */
  #schedule(): void {
    if (this.#running || this.#timer !== undefined || !this.#pending) return;
    const wait = this.#lastStart + this.intervalMs - performance.now();
    if (wait > 0) {
      this.#timer = setTimeout(() => { // at most one interval; stop() clears it
        this.#timer = undefined;
        this.#schedule();
      }, wait);
      return;
    }
    const { value } = this.#pending;
    this.#pending = undefined;
    this.#lastStart = performance.now();
    this.#running = this.write(value).catch(() => {}).finally(() => {
      this.#running = undefined;
      this.#schedule();
    });
  }

  /**
   * Stop: a value not yet written is dropped (the caller writes the last word itself) and the
   * write in progress, if any, is waited for.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pending = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
