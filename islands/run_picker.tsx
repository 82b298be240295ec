/** The run picker: every run, newest first, as the server lists them. */
import type { RunSummary } from "../lib/runs/summary_types.ts";

/** Props of {@link RunPicker}. */
export interface RunPickerProps {
  runs: RunSummary[];
  runId: string | null;
  onChange: (runId: string) => void;
}

function label(run: RunSummary): string {
  const started = run.started as Record<string, unknown> | null;
  const plan = typeof started?.plan === "string" ? ` · ${started.plan}` : "";
  const bad = run.journal_verified ? "" : " · TAMPERED";
  return `${run.run_id}${plan} · ${run.status} · ${run.event_count} events${bad}`;
}

/** A labelled select of runs. */
export function RunPicker({ runs, runId, onChange }: RunPickerProps) {
  return (
    <label>
      Run
      <select
        name="run"
        value={runId ?? ""}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      >
        {runs.map((run) => <option key={run.run_id} value={run.run_id}>{label(run)}</option>)}
      </select>
    </label>
  );
}
