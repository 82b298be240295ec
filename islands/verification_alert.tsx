/**
 * The verification alert on the board (spec §3.3): reads the `verification_nudge` of `/status`
 * whenever the activity stream reports something (`tick` changes), shows a warning toast for
 * 10 s the first time the threshold trips while the page is open, and keeps a quiet indicator
 * in the header while the alert holds.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { apiFetch } from "../lib/dashboard/api.ts";
import {
  alertWords,
  FRESH_ALERT,
  nextAlert,
  TOAST_MS,
} from "../lib/dashboard/verification_alert.ts";
import type { VerificationNudge } from "../lib/verification/nudge_types.ts";
import { ADD_EVIDENCE } from "../lib/verification/advice.ts";

/** Props of {@link VerificationAlert}. */
export interface VerificationAlertProps {
  token: string;
  /** Changes on every activity notice or reconnection: the summary is read again. */
  tick: number;
}

/** The toast and the indicator. */
export function VerificationAlert({ token, tick }: VerificationAlertProps) {
  const memory = useRef(FRESH_ALERT);
  const [nudge, setNudge] = useState<VerificationNudge | null>(null);
  const [toast, setToast] = useState<string | null>(null);
  /** What the alert advises for the configuration its tasks ran under (`/status`). */
  const [advice, setAdvice] = useState(ADD_EVIDENCE);
  useEffect(() => {
    let live = true;
    apiFetch<{ verification_nudge?: VerificationNudge; verification_advice?: unknown }>(
      "/status",
      { token },
    ).then(
      (status) => {
        const n = status.verification_nudge;
        if (!live || !n) return;
        if (typeof status.verification_advice === "string") setAdvice(status.verification_advice);
        const next = nextAlert(memory.current, n);
        memory.current = next.memory;
        setNudge(n);
        if (next.toast) setToast(alertWords(n));
      },
      () => {/* the status is advisory: the board's own errors are shown elsewhere */},
    );
    return () => {
      live = false;
    };
  }, [token, tick]);
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
