/**
 * A task's story for a reviewer: where it stands and why, then each attempt (newest first, each
 * labelled with its one number) with its outcome, the agent's summary, the checks that ran on
 * its completion, the operators' reviews of it, the reason it stopped (the failed signals, with
 * their output), its exit, and the tail of its session log with whether the kept log still
 * matches the journal's digest. Gates and verdicts of earlier attempts live here, not on the card.
 */
import type { Attempt } from "../../lib/board/activity_types.ts";
import type { ServedLog, TaskDetailResponse } from "../../lib/review/types.ts";
import { STATE_WORDS } from "./run_outline.tsx";
import { isolationWords } from "./card_view.tsx";
import { gateText } from "../../lib/verification/gate_words.ts";
import { showBidiControls } from "../../lib/dashboard/bidi_controls.ts";
import { AgentText } from "./agent_text.tsx";

/** Props of {@link AttemptsView}. */
export interface AttemptsViewProps {
  detail: TaskDetailResponse["task"];
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The task's pull request: its link, state, what it waits for, its checks and reviews. */
function PullRequestLine({ pr }: { pr: NonNullable<TaskDetailResponse["task"]["pull_request"]> }) {
  return (
    <p style="margin:0 0 .4rem" data-pull-request={pr.number} data-pr-state={pr.state}>
      pull request{" "}
      <a
        href={/^https?:\/\//.test(pr.url) ? pr.url : undefined}
        rel="noopener noreferrer"
        target="_blank"
      >
        #{pr.number}
      </a>{" "}
      <span class="badge">{pr.state}</span>
      {pr.waits_for && <span data-pr-waits>{` ${pr.waits_for}`}</span>}
      {pr.closed_reason && <span>{` ${pr.closed_reason}`}</span>}
      {pr.checks.length > 0 && (
        <span class="muted">
          {" · checks: "}
          {pr.checks.map((c) => `${c.name}${c.required ? " (required)" : ""} ${c.state}`).join(
            ", ",
          )}
        </span>
      )}
      {pr.reviews.length > 0 && (
        <span class="muted">
          {" · reviews: "}
          {pr.reviews.map((r) => `${r.user} ${r.state.replace("_", " ")}`).join(", ")}
        </span>
      )}
    </p>
  );
}

/** An attempt's session log: whether it still matches the journal, and its tail. */
function LogLine({ log }: { log: ServedLog }) {
  return (
    <details data-log-verified={String(log.verified)}>
      <summary>
        Session log ({log.bytes} bytes) {log.missing
          ? <span class="badge bad">file missing</span>
          : log.verified
          ? <span class="badge ok">matches the journal</span>
          : <span class="badge bad">DOES NOT MATCH the journal's digest</span>}
      </summary>
      {log.tail !== undefined && (
        <pre class="evidence">{log.truncated ? "…\n" : ""}{showBidiControls(log.tail)}</pre>
      )}
    </details>
  );
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
        {detail.reason && (
          <span data-task-reason>
            <AgentText text={detail.reason} />
          </span>
        )}
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
      {detail.pull_request && <PullRequestLine pr={detail.pull_request} />}
      {detail.depends_on.length > 0 && (
        <p class="muted" style="margin:0 0 .4rem">depends on {detail.depends_on.join(", ")}</p>
      )}
      {attempts.length === 0 ? <p class="muted">No attempt yet.</p> : (
        <ol class="attempts">
          {attempts.map((a) => (
            <li key={a.session_id} data-attempt={a.number} data-outcome={a.outcome}>
              <strong>Attempt {a.number}</strong>: {a.outcome.replace("_", " ")}{" "}
              <span class="muted">
                · session <code>{a.session_id}</code>
                {a.role ? ` · ${a.role}` : ""}
                {a.adapter ? ` · ${a.adapter}` : ""}
                {a.worker ? ` · on worker ${a.worker}` : ""}
                {a.model ? ` · ${a.model}` : ""}
                {a.isolation ? ` · ran ${isolationWords(a.isolation)}` : ""}
                {a.exit ? exitWords(a.exit) : ""}
              </span>
              {a.batch && (
                <div data-batch={a.batch.outcome ?? "in_flight"}>
                  batch request{a.batch.provider ? ` to ${a.batch.provider}` : ""}
                  {a.batch.batch_id
                    ? (
                      <>
                        {" "}(<code>{a.batch.batch_id}</code>)
                      </>
                    )
                    : ""}: {a.batch.outcome ? a.batch.outcome.replace("_", " ") : "in flight"}
                  {a.batch.reason ? ` — ${showBidiControls(a.batch.reason)}` : ""}
                </div>
              )}
              {/* In the order it happened: its worktree, the report, its checks, reviews, then what stopped it. */}
              {a.prepared && <PreparedLine p={a.prepared} />}
              {a.summary && (
                <div data-summary>
                  Agent's summary: <AgentText text={a.summary} />
                </div>
              )}
              {a.kept_out && <KeptOutLine k={a.kept_out} />}
              {a.verification && <VerificationLine v={a.verification} />}
              {a.protected_paths && a.protected_paths.length > 0 && (
                <div data-attempt-protected>
                  Changes protected paths: {a.protected_paths.join(", ")}{" "}
                  (lands only on an operator's merge)
                </div>
              )}
              {a.owned_files_exceeded && (
                <div data-attempt-owned-exceeded>
                  Changes {a.owned_files_exceeded.paths.join(", ")}{" "}
                  outside its owned_files ({a.owned_files_exceeded.owned_files.join(", ")})
                  {a.owned_files_exceeded.enforced ? ": refused (enforce_owned_files)" : ""}
                </div>
              )}
              {a.reviews?.map((r) => (
                <div key={r.index} data-review={r.decision}>
                  Review: <strong>{r.decision.replace("_", " ")}</strong> by {r.principal}
                  {r.note ? `: “${showBidiControls(r.note)}”` : ""}
                </div>
              ))}
              {a.signals?.map((s, i) => (
                <div key={i} class="gate" data-signal={s.kind}>
                  ✗ <AgentText text={gateText(s)} />
                  {typeof s.output_tail === "string" && s.output_tail && (
                    <pre class="evidence">{showBidiControls(s.output_tail)}</pre>
                  )}
                </div>
              ))}
              {a.unreported && <div data-unreported={a.unreported}>{unreportedWords(a)}</div>}
              {a.retried_because && (
                <div class="muted">
                  new attempt: <AgentText text={a.retried_because} />
                </div>
              )}
              {a.log && <LogLine log={a.log} />}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** What the attempt's worktree got before its agent started (DESIGN.md §13). */
function PreparedLine({ p }: { p: NonNullable<Attempt["prepared"]> }) {
  const copied = p.copied_total ?? p.copied.length;
  const parts = [
    copied
      ? `copied ${p.copied.slice(0, 5).join(", ")}${copied > 5 ? ` (${copied} files)` : ""}`
      : "",
    p.linked.length ? `linked ${p.linked.join(", ")}` : "",
    p.ports.length
      ? `PORT ${p.ports[0]}${p.ports.length > 1 ? ` (ports ${p.ports.join(",")})` : ""}`
      : "",
  ].filter((x) => x !== "");
  return (
    <div data-prepared>
      Worktree: {parts.join(" · ") || "nothing copied or linked"}
      {p.setup.map((s, i) => (
        <div key={i} class={s.exit_code === 0 ? "" : "gate"} data-setup-exit={s.exit_code}>
          {s.exit_code === 0 ? "✓" : "✗"} setup <code>{s.command}</code>{" "}
          <span class="muted">
            exit {s.exit_code} after {seconds(s.ms)}
          </span>
        </div>
      ))}
    </div>
  );
}

/** How an attempt's unreported work was taken (DESIGN.md §7). */
/** How an attempt's agent ended; a lost lease saw no exit, so it shows no exit code. */
function exitWords(exit: NonNullable<Attempt["exit"]>): string {
  if (exit.lease_lost) {
    return ` · lost after ${
      seconds(exit.duration_ms)
    }: its worker stopped heartbeating (no exit seen)`;
  }
  return ` · exit ${exit.exit_code} after ${seconds(exit.duration_ms)}${
    exit.ended_by ? ` (${exit.ended_by})` : ""
  }`;
}

function unreportedWords(a: Attempt): string {
  if (a.unreported === "exited") return "exited without a report: its work went through the gates";
  return a.outcome === "merged"
    ? "landed without a report: interrupted, every completion signal passed (recovery.land_unreported)"
    : "interrupted without a report: every completion signal passed, so its work goes through the gates (recovery.land_unreported)";
}

/**
 * What the service observed of one completion. "Verified" means checks ran on it (the ledger's
 * definition, spec §2.10), not that they passed, so the badge names the checks that ran; what
 * failed is in the ✗ rows after it.
 */
function VerificationLine({ v }: { v: NonNullable<Attempt["verification"]> }) {
  const flags: [boolean, string, string][] = [
    // `tests_run` is what the agent's own log shows (spec §2.9), not a `test_passes` signal: a
    // plain "did not run: tests" read as if the step's test command had been skipped.
    [v.tests_run, "tests ran", "no test run in the agent's log"],
    [v.quality_gates_run, "quality gates ran", "no quality gates"],
    [v.completion_signals_checked, "completion signals checked", "no completion signals"],
  ];
  const ran = flags.filter(([on]) => on).map(([, label]) => label);
  const missing = flags.filter(([on]) => !on).map(([, , noun]) => noun);
  const run = v.test_runs[0];
  return (
    <div data-verification={v.verified ? "verified" : "unverified"}>
      Completion checks: {v.verified
        ? <span class="badge ok">verified: {ran.join(", ")}</span>
        : <span class="badge bad">unverified: no tests, quality gates or signals ran</span>}{" "}
      <span class="muted">
        {run ? `(${run.runner}: ${run.line})` : ""}
        {v.verified ? missing.map((noun) => ` · ${noun}`).join("") : ""}
      </span>
    </div>
  );
}

/** Ignored or copied files kept out of an attempt's commits (`task_files_kept_out`). */
function KeptOutLine({ k }: { k: NonNullable<Attempt["kept_out"]> }) {
  const more = k.paths_total && k.paths_total > k.paths.length
    ? ` and ${k.paths_total - k.paths.length} more`
    : "";
  return (
    <div data-kept-out>
      Kept out of its commits (ignored or copied files, never committed): {k.paths.join(", ")}
      {more}
      {k.rewritten_commits > 0
        ? `; the agent's ${k.rewritten_commits} commit(s) holding them were rewritten into one`
        : ""}
    </div>
  );
}
