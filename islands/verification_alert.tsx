/**
 * The verification alert on the board (spec §3.3): given the `verification_nudge` of `/status`
 * each time the page reads it (islands/status_alerts.tsx), shows a warning toast for 10 s the
 * first time the threshold trips while the page is open, and keeps a quiet indicator in the
 * header while the alert holds.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import {
  alertWords,
  FRESH_ALERT,
  nextAlert,
  TOAST_MS,
} from "../lib/dashboard/verification_alert.ts";
import type { VerificationNudge } from "../lib/verification/nudge_types.ts";

/** Props of {@link VerificationAlert}. */
export interface VerificationAlertProps {
  /** The summary as `/status` last gave it (a new object each time it is read). */
  nudge: VerificationNudge | null;
  /** What the alert advises for the configuration its tasks ran under (`/status`). */
  advice: string;
}

/** The toast and the indicator. */
export function VerificationAlert({ nudge, advice }: VerificationAlertProps) {
  const memory = useRef(FRESH_ALERT);
  const [toast, setToast] = useState<string | null>(null);
  useEffect(() => {
    if (!nudge) return;
    const next = nextAlert(memory.current, nudge);
    memory.current = next.memory;
    if (next.toast) setToast(alertWords(nudge));
  }, [nudge]);
  useEffect(() => {
    if (toast === null) return;
    const timer = setTimeout(() => setToast(null), TOAST_MS);
    return () => clearTimeout(timer);
  }, [toast]);
  return (
    <>
      {nudge?.threshold_exceeded && (
        <span
          class="badge bad alert-indicator"
          data-verification-alert
          title={alertWords(nudge)}
        >
          ⚠ {nudge.unverified_count}/{nudge.total_completions} unverified
        </span>
      )}
      {toast !== null && (
        <div class="toast" role="alert" data-verification-toast data-timeout-ms={TOAST_MS}>
          <strong>Verification</strong> {toast} {advice}
          <button
            type="button"
            aria-label="dismiss"
            onClick={() =>
              setToast(null)}
          >
            ×
          </button>
        </div>
      )}
    </>
  );
}
