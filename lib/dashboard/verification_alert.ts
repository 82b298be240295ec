/**
 * The board's verification alert (spec §3.3, §8), browser-safe and pure: a warning toast for
 * {@link TOAST_MS} the first time the threshold trips while the page is open, and a quiet
 * indicator while the alert holds. A page opened with the alert already on shows only the
 * indicator: the trip happened before it was there to see it.
 */
import type { VerificationNudge } from "../verification/nudge_types.ts";

/** How long the toast stays (spec §8: toast timeout on alert, 10 s). */
export const TOAST_MS = 10_000;

/** What the page remembers between summaries. */
export interface AlertMemory {
  /** `threshold_exceeded` of the last summary read; undefined before the first. */
  exceeded: boolean | undefined;
  /** The toast was shown already (it shows once per page). */
  toasted: boolean;
}

/** The memory of a freshly opened page. */
export const FRESH_ALERT: AlertMemory = { exceeded: undefined, toasted: false };

/** The next memory after reading `nudge`, and whether to show the toast now. */
export function nextAlert(
  memory: AlertMemory,
  nudge: Pick<VerificationNudge, "threshold_exceeded">,
): { memory: AlertMemory; toast: boolean } {
  const tripped = nudge.threshold_exceeded && memory.exceeded === false;
  const toast = tripped && !memory.toasted;
  return {
    memory: { exceeded: nudge.threshold_exceeded, toasted: memory.toasted || toast },
    toast,
  };
}

/** The words of the toast and of the indicator's tooltip. */
export function alertWords(n: VerificationNudge): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const recent = n.recent_unverified.length
    ? ` Recent: ${n.recent_unverified.slice(0, 5).join(", ")}.`
    : "";
  return `ALERT: ${n.unverified_count} of ${n.total_completions} completions unverified ` +
    `(${pct(n.unverified_ratio)} > threshold ${pct(n.nudge_threshold)}).${recent}`;
}
