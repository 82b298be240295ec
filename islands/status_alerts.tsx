/**
 * What the board's header shows from `/status`, read once whenever the activity stream reports
 * something (`tick` changes): the verification alert (islands/verification_alert.tsx) and the
 * warnings that the latest run changed the repository's command-running git setup
 * (islands/git_setup_warning.tsx) or that its branch gained commits the service did not make
 * (islands/outside_commits_warning.tsx).
 */
import { useEffect, useState } from "preact/hooks";
import { apiFetch } from "../lib/dashboard/api.ts";
import { ADD_EVIDENCE } from "../lib/verification/advice.ts";
import type { VerificationNudge } from "../lib/verification/nudge_types.ts";
import type { GitSetupChanges } from "../lib/runs/git_setup_words.ts";
import { VerificationAlert } from "./verification_alert.tsx";
import { GitSetupWarning } from "./git_setup_warning.tsx";
import { OutsideCommitsWarning } from "./outside_commits_warning.tsx";
import type { OutsideCommitsStatus } from "../lib/runs/outside_commits_words.ts";

/** Props of {@link StatusAlerts}. */
export interface StatusAlertsProps {
  token: string;
  /** Changes on every activity notice or reconnection: the status is read again. */
  tick: number;
}

/** The parts of `/status` the header shows. */
interface AlertParts {
  verification_nudge?: VerificationNudge;
  verification_advice?: unknown;
  git_setup?: GitSetupChanges | null;
  outside_commits?: OutsideCommitsStatus | null;
}

/** The verification alert and the git setup warning, from one read of `/status` per tick. */
export function StatusAlerts({ token, tick }: StatusAlertsProps) {
  const [parts, setParts] = useState<AlertParts | null>(null);
  useEffect(() => {
    let live = true;
    apiFetch<AlertParts>("/status", { token }).then(
      (status) => {
        if (live) setParts(status);
      },
      () => {/* the status is advisory: the board's own errors are shown elsewhere */},
    );
    return () => {
      live = false;
    };
  }, [token, tick]);
  const advice = parts?.verification_advice;
  return (
    <>
      <VerificationAlert
        nudge={parts?.verification_nudge ?? null}
        advice={typeof advice === "string" ? advice : ADD_EVIDENCE}
      />
      <GitSetupWarning setup={parts?.git_setup ?? null} />
      <OutsideCommitsWarning part={parts?.outside_commits ?? null} />
    </>
  );
}
