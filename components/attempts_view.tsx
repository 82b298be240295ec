/**
 * A task's story for a reviewer: where it stands and why, then each attempt with its outcome,
 * the reason it stopped (the failed signals, with their output), the agent's summary, its exit,
 * and the tail of its session log with whether the kept log still matches the journal's digest.
 */
import type { Attempt } from "../lib/board/activity.ts";
import type { TaskDetailResponse } from "../lib/review/activity.ts";
import { STATE_WORDS } from "./run_outline.tsx";

/** Props of {@link AttemptsView}. */
export interface AttemptsViewProps {
  detail: TaskDetailResponse["task"];
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The state line and the attempts, newest first. */
export function AttemptsView({ detail }: AttemptsViewProps) {
  const attempts = [...detail.attempts].reverse();
  return (
    <div data-task-state={detail.state}>
      <p style="margin:0 0 .4rem">
        <span class={`badge ${["failed", "blocked", "gated"].includes(detail.state) ? "bad" : ""}`}>
          {STATE_WORDS[detail.state]}
        </span>{" "}
        {detail.reason && <span data-task-reason>{detail.reason}</span>}
        {detail.merged?.commit && (
          <span>
            landed as <code>{detail.merged.commit.slice(0, 12)}</code>
            {detail.attempts.at(-1)?.unreported === "interrupted" && (
              <>
                {" "}
                <span class="badge bad" data-landed-without-report>landed without a report</span>
              </>
            )}
          </span>
        )}
      </p>
      {detail.depends_on.length > 0 && (
        <p class="muted" style="margin:0 0 .4rem">depends on {detail.depends_on.join(", ")}</p>
      )}
      {attempts.length === 0 ? <p class="muted">No attempt yet.</p> : (
        <ol class="attempts" reversed>
          {attempts.map((a) => (
            <li key={a.session_id} data-attempt={a.number} data-outcome={a.outcome}>
              <strong>Attempt {a.number}</strong>: {a.outcome.replace("_", " ")}
              <span class="muted">
                · session <code>{a.session_id}</code>
                {a.role ? ` · ${a.role}` : ""}
                {a.model ? ` · ${a.model}` : ""}
                {a.exit
                  ? ` · exit ${a.exit.exit_code} after ${seconds(a.exit.duration_ms)}${
                    a.exit.ended_by ? ` (${a.exit.ended_by})` : ""
                  }`
                  : ""}
              </span>
              {a.signals?.map((s, i) => (
                <div key={i} class="gate" data-signal={s.kind}>
                  ✗ {s.kind}: {s.detail}
                  {typeof s.output_tail === "string" && s.output_tail && (
                    <pre class="evidence">{s.output_tail}</pre>
                  )}
                </div>
              ))}
              {a.unreported && <div data-unreported={a.unreported}>{unreportedWords(a)}</div>}
              {a.retried_because && <div class="muted">new attempt: {a.retried_because}</div>}
              {a.summary && <div data-summary>Agent's summary: {a.summary}</div>}
              {a.verification && <VerificationLine v={a.verification} />}
              {a.log && (
                <details data-log-verified={String(a.log.verified)}>
                  <summary>
                    Session log ({a.log.bytes} bytes) {a.log.missing
                      ? <span class="badge bad">file missing</span>
                      : a.log.verified
                      ? <span class="badge ok">matches the journal</span>
                      : <span class="badge bad">DOES NOT MATCH the journal's digest</span>}
                  </summary>
                  {a.log.tail !== undefined && (
                    <pre class="evidence">{a.log.truncated ? "…\n" : ""}{a.log.tail}</pre>
                  )}
                </details>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** How an attempt's unreported work was taken (DESIGN.md §7). */
function unreportedWords(a: Attempt): string {
  if (a.unreported === "exited") return "exited without a report: its work went through the gates";
  return a.outcome === "merged"
    ? "landed without a report: interrupted, every completion signal passed (recovery.land_unreported)"
    : "interrupted without a report: every completion signal passed, so its work goes through the gates (recovery.land_unreported)";
}

/** The observed evidence of one completion: the three flags and the test run the log showed. */
function VerificationLine({ v }: { v: NonNullable<Attempt["verification"]> }) {
  const mark = (on: boolean, label: string) => `${on ? "✓" : "✗"} ${label}`;
  const run = v.test_runs[0];
  return (
    <div data-verification={v.verified ? "verified" : "unverified"}>
      Verification: {v.verified
        ? <span class="badge ok">verified</span>
        : <span class="badge bad">unverified</span>}{" "}
      <span class="muted">
        {mark(v.tests_run, "tests run")}
        {run ? ` (${run.runner}: ${run.line})` : ""} · {mark(v.quality_gates_run, "quality gates")}
        {" · "}
        {mark(v.completion_signals_checked, "completion signals")}
      </span>
    </div>
  );
}
