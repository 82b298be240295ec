/**
 * The verification ledger's records kept as numbers (pure): when each was written, whether it was
 * verified, and the task id of each unverified one. Records are added as the ledger grows, so its
 * summary (lib/verification/nudge.ts) is worked out without parsing the whole ledger again — a
 * long-lived service's ledger holds one line per completion, ever. Nine bytes a record, plus the
 * unverified ones' ids.
 */
import type { VerificationNudge } from "./nudge_types.ts";
import type { NudgeSettings } from "./nudge.ts";

/** How many unverified task ids `recent_unverified` lists at most. */
const RECENT_UNVERIFIED_LIMIT = 10;

/** The records of a ledger seen so far. */
export class LedgerTally {
  /** Epoch seconds of each record (NaN: it gave none, so it never ages out). */
  #at = new Float64Array(256);
  #verified = new Uint8Array(256);
  #count = 0;
  #verifiedCount = 0;
  /** The unverified records, oldest first: their index and task id. */
  readonly #unverified: { index: number; taskId: string }[] = [];

  /** Records read so far. */
  get size(): number {
    return this.#count;
  }

  /** Add the records of complete ledger lines; a line that is not a record is skipped. */
  addLines(lines: Iterable<string>): void {
    for (const line of lines) {
      if (line.trim() === "") continue;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (!record || typeof record !== "object" || typeof record.task_id !== "string") continue;
      // A record's own `verified` is authoritative; an older one without it: any evidence flag.
      const verified = typeof record.verified === "boolean" ? record.verified : Boolean(
        record.tests_run || record.quality_gates_run || record.completion_signals_checked,
      );
      this.#add(
        typeof record.timestamp === "number" ? record.timestamp : NaN,
        verified,
        record.task_id,
      );
    }
  }

  #add(at: number, verified: boolean, taskId: string): void {
    if (this.#count === this.#at.length) {
      const at2 = new Float64Array(this.#at.length * 2);
      at2.set(this.#at);
      this.#at = at2;
      const verified2 = new Uint8Array(this.#verified.length * 2);
      verified2.set(this.#verified);
      this.#verified = verified2;
    }
    this.#at[this.#count] = at;
    this.#verified[this.#count] = verified ? 1 : 0;
    if (verified) this.#verifiedCount++;
    else this.#unverified.push({ index: this.#count, taskId });
    this.#count++;
  }

  /**
   * The summary (spec §2.10): records older than `max_age_hours` before `nowMs` left out; strict
   * `>` on the unrounded ratio, rounded to 3 decimals; `recent_unverified` distinct, newest first.
   */
  summary(settings: NudgeSettings, nowMs: number = Date.now()): VerificationNudge {
    const oldest = settings.max_age_hours === undefined
      ? -Infinity
      : nowMs / 1000 - settings.max_age_hours * 3600;
    const counts = (i: number) => !(this.#at[i] < oldest); // NaN (no timestamp) always counts
    let total = this.#count;
    let verified = this.#verifiedCount;
    if (oldest !== -Infinity) {
      total = verified = 0;
      for (let i = 0; i < this.#count; i++) {
        if (!counts(i)) continue;
        total++;
        verified += this.#verified[i];
      }
    }
    const recent = new Set<string>();
    for (let k = this.#unverified.length - 1; k >= 0; k--) {
      if (recent.size === RECENT_UNVERIFIED_LIMIT) break;
      const { index, taskId } = this.#unverified[k];
      if (counts(index)) recent.add(taskId);
    }
    const unverified = total - verified;
    const ratio = total === 0 ? 0 : unverified / total;
    return {
      total_completions: total,
      verified_count: verified,
      unverified_count: unverified,
      unverified_ratio: Math.round(ratio * 1000) / 1000,
      threshold_exceeded: total >= settings.min_completions && ratio > settings.threshold,
      nudge_threshold: settings.threshold,
      recent_unverified: [...recent],
    };
  }
}
