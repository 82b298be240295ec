/** The evidence panel island: a task's sealed evidence bundle, or why there is none. */
import { EvidenceView, NoEvidence } from "./parts/evidence_view.tsx";
import type { EvidenceResponse } from "../lib/review/types.ts";
import { useApi } from "./_use_api.ts";

/** Props of {@link EvidencePanel}. */
export interface EvidencePanelProps {
  runId: string;
  taskId: string;
  token: string;
  version: string;
}

/** Fetch and show the evidence bundle; a 404 says whether producers were declared. */
export function EvidencePanel({ runId, taskId, token, version }: EvidencePanelProps) {
  const path = `/review-board/runs/${encodeURIComponent(runId)}/evidence/${
    encodeURIComponent(taskId)
  }`;
  const state = useApi<EvidenceResponse>(path, token, version);
  if (state.status === "loading") return <p class="muted">loading evidence…</p>;
  if (state.status === "error") {
    if (state.error.status === 404) return <NoEvidence code={state.error.code} />;
    return <p class="error" role="alert">{state.error.words}</p>;
  }
  return <EvidenceView bundle={state.value} />;
}
