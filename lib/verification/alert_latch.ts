/**
 * The verification alert's edge (spec §3.3): it is told once, the moment the threshold trips.
 * The summary is read before the first record (an alert already up when the process starts does
 * not trip again) and after each one; reads run one after another, in the order they were asked,
 * so a slow read of an older ledger can never land after a newer one and trip the alert twice.
 */
import type { VerificationNudge } from "./nudge_types.ts";

/** What {@link AlertLatch} reads and whom it tells. */
export interface AlertLatchOptions {
  /** The summary as the ledger is now. */
  read: () => Promise<VerificationNudge>;
  /** Told when the threshold trips. */
  onTrip?: (nudge: VerificationNudge) => void;
  /** Where an unreadable summary is reported. */
  warn: (line: string) => void;
}

/** Tells {@link AlertLatchOptions.onTrip} each time the alert goes from down to up. */
export class AlertLatch {
  readonly #o: AlertLatchOptions;
  /** The last state read; every read chains onto the one before it. */
  #state: Promise<boolean> | undefined;

  constructor(options: AlertLatchOptions) {
    this.#o = options;
  }

  /** The alert's state before this process records anything (read once). */
  async baseline(): Promise<void> {
    await this.#baseline();
  }

  #baseline(): Promise<boolean> {
    return this.#state ??= this.#o.read().then((n) => n.threshold_exceeded, () => false);
  }

  /** Read the summary after a record; tell `onTrip` when the alert has just tripped. */
  check(): Promise<void> {
    const state = this.#state = this.#baseline().then(async (up) => {
      try {
        const nudge = await this.#o.read();
        if (nudge.threshold_exceeded && !up) this.#o.onTrip?.(nudge);
        return nudge.threshold_exceeded;
      } catch (e) {
        this.#o.warn(`verification summary unreadable: ${(e as Error).message}`);
        return up;
      }
    });
    return state.then(() => {});
  }
}
