/**
 * The evidence panel's pieces (spec §2.5): the sealed bundle's producers with exit codes and
 * digests, the gate verdict, the observed evidence flags, and an EVIDENCE UNVERIFIED badge (like
 * the diff viewer's) with the reasons when anything no longer re-hashes or chains.
 */
import type { EvidenceResponse } from "../../lib/review/types.ts";

/** Props of {@link EvidenceView}. */
export interface EvidenceViewProps {
  bundle: EvidenceResponse;
}

interface ShownProducer {
  name?: string;
  command?: string;
  exit_code?: number;
  timed_out?: boolean;
  truncated?: boolean;
  output?: { sha256?: string; size?: number };
}

interface ShownCheck {
  kind?: string;
  name?: string;
  detail?: string;
  passed?: boolean;
  exit_code?: number;
}

/** Shown on a 404: why there is no bundle. */
export function NoEvidence({ code }: { code: string }) {
  return code === "evidence_not_sealed"
    ? (
      <p class="muted" data-no-evidence="not_sealed">
        evidence producers declared; nothing sealed yet (sealed when the gates run on the work)
      </p>
    )
    : <p class="muted" data-no-evidence="none">no evidence producers declared</p>;
}

const flag = (on: unknown, label: string) => (
  <span class={`badge ${on ? "ok" : ""}`} data-evidence-flag={label} data-on={on ? "1" : "0"}>
    {on ? "✓" : "✗"} {label}
  </span>
);

/** The bundle: badge, producers, verdict, flags, hashes. */
export function EvidenceView({ bundle }: EvidenceViewProps) {
  const producers = (Array.isArray(bundle.producers) ? bundle.producers : []) as ShownProducer[];
  const verdict = (bundle.verdict ?? {}) as { passed?: boolean; checks?: ShownCheck[] };
  const checks = Array.isArray(verdict.checks) ? verdict.checks : [];
  const evidence = (bundle.evidence ?? {}) as Record<string, unknown>;
  return (
    <div data-evidence>
      <p style="margin:0 0 .5rem">
        {bundle.verified
          ? (
            <span
              class="badge ok"
              data-evidence-verified
              title="its outputs re-hash, its hash is the one the journal chains, its signature and audit entry check out; whether the checks passed is the gate verdict below"
            >
              evidence verified
            </span>
          )
          : (
            <span class="badge bad" role="status" data-evidence-unverified>
              EVIDENCE UNVERIFIED
            </span>
          )} <span class="hash" data-bundle-hash>{String(bundle.bundle_hash ?? "no bundle")}</span>
        {bundle.verified && !verdict.passed && (
          <span class="muted" data-verified-what>
            {" "}— verified means the bundle is intact; the checks it records did not all pass
          </span>
        )}
      </p>
      {!bundle.verified && (
        <ul class="muted" data-evidence-problems>
          {bundle.problems.map((p) => <li key={p}>{p}</li>)}
        </ul>
      )}
      <table class="evidence-producers">
        <thead>
          <tr>
            <th>producer</th>
            <th>command</th>
            <th>exit</th>
            <th>output</th>
          </tr>
        </thead>
        <tbody>
          {producers.map((p) => (
            <tr key={p.name} data-producer={p.name}>
              <td>{p.name}</td>
              <td>
                <code>{p.command}</code>
              </td>
              <td data-exit-code={String(p.exit_code)}>
                <span class={`badge ${p.exit_code === 0 ? "ok" : "bad"}`}>
                  {p.timed_out ? "timed out" : `exit ${p.exit_code}`}
                </span>
              </td>
              <td>
                <span class="hash">{p.output?.sha256}</span> · {p.output?.size} bytes
                {p.truncated ? " (truncated)" : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p style="margin:.5rem 0 .25rem" data-verdict={verdict.passed ? "passed" : "failed"}>
        gate verdict: {verdict.passed
          ? <span class="badge ok">passed</span>
          : <span class="badge bad">failed</span>}
      </p>
      {checks.length > 0 && (
        <ul class="evidence-checks">
          {checks.map((c) => (
            <li key={`${c.kind}:${c.name ?? c.detail}`} data-check={c.name ?? c.detail}>
              <span class={`badge ${c.passed ? "ok" : "bad"}`}>{c.passed ? "pass" : "fail"}</span>
              {" "}
              {c.kind} {c.name ? <strong>{c.name}</strong> : null} <code>{c.detail}</code>
              {c.exit_code !== undefined ? ` (exit ${c.exit_code})` : ""}
            </li>
          ))}
        </ul>
      )}
      <p style="margin:.25rem 0">
        {flag(evidence.tests_run, "tests run")}{" "}
        {flag(evidence.quality_gates_run, "quality gates run")}{" "}
        {flag(evidence.completion_signals_checked, "completion signals checked")}
      </p>
      <details>
        <summary>bundle contents</summary>
        <pre class="evidence">{JSON.stringify(bundle, null, 2)}</pre>
      </details>
    </div>
  );
}
