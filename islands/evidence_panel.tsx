/** The evidence panel island: a task's sealed evidence bundle, or why there is none. */
import { EvidenceView } from "../components/evidence_view.tsx";
import { useApi } from "./_use_api.ts";

/** Props of {@link EvidencePanel}. */
export interface EvidencePanelProps {
  runId: string;
  taskId: string;
  token: string;
  version: string;
}

/** Fetch and show the evidence bundle; 404 means no producers were declared. */
export function EvidencePanel({ runId, taskId, token, version }: EvidencePanelProps) {
  const path = `/review-board/runs/${encodeURIComponent(runId)}/evidence/${
    encodeURIComponent(taskId)
  }`;
  const state = useApi<Record<string, unknown>>(path, token, version);
  if (state.status === "loading") return <p class="muted">loading evidence…</p>;
  if (state.status === "error") {
    if (state.error.status === 404) return <EvidenceView bundle={null} />;
    return <p class="error" role="alert">{state.error.words}</p>;
  }
  return <EvidenceView bundle={state.value} />;
}
