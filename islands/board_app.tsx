/**
 * The board app island: token, run picker, live status, the board of the chosen run and the
 * selected task. It holds no board state of its own: every board it shows is a projection
 * receipt the server answered (a GET, or the `board` of a review receipt).
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Column, COLUMNS } from "../lib/board/fold.ts";
import type { ProjectionReceipt } from "../lib/board/projection.ts";
import type { RunSummary } from "../lib/runs/runs.ts";
import type { RunOutline } from "../lib/review/activity.ts";
import { RunOutlineView } from "../components/run_outline.tsx";
import { ApiError, apiFetch } from "../lib/dashboard/api.ts";
import { coalesce } from "../lib/dashboard/coalesce.ts";
import { connectActivity, type LiveState } from "../lib/dashboard/live.ts";
import { BoardColumns } from "../components/board_columns.tsx";
import { JournalReceipt } from "../components/journal_receipt.tsx";
import { TOKEN_KEY, TokenField } from "./token_field.tsx";
import { RunPicker } from "./run_picker.tsx";
import { TaskDetail } from "./task_detail.tsx";
import { VerificationAlert } from "./verification_alert.tsx";

const LIVE_WORDS: Record<LiveState | "off", string> = {
  off: "not connected",
  connecting: "connecting…",
  live: "live",
  reconnecting: "reconnecting…",
};

function findCard(receipt: ProjectionReceipt | null, taskId: string | null) {
  if (!receipt || !taskId) return undefined;
  for (const column of COLUMNS) {
    const card = receipt.board.columns[column].find((c) => c.task_id === taskId);
    if (card) return { card, column: column as Column };
  }
  return undefined;
}

/** Props of {@link BoardApp}. */
export interface BoardAppProps {
  /** Called once the first answer is on screen: the board, "no runs yet", or an error. */
  onShown?: () => void;
}

/** The whole interactive board page. */
export function BoardApp({ onShown }: BoardAppProps) {
  const [ready, setReady] = useState(false);
  const [token, setToken] = useState("");
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  const [runId, setRunId] = useState<string | null>(null);
  const [receipt, setReceipt] = useState<ProjectionReceipt | null>(null);
  const [outline, setOutline] = useState<RunOutline | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [live, setLive] = useState<LiveState | "off">("off");
  // Bumped on every activity notice: the verification alert reads the summary again.
  const [activity, setActivity] = useState(0);
  const current = useRef({ token, runId, runs });
  current.current = { token, runId, runs };

  const onError = (e: unknown) =>
    setError(e instanceof ApiError ? e : new ApiError(0, "error", String(e)));
  const loadRuns = useMemo(() =>
    coalesce(async () => {
      const answer = await apiFetch<{ runs: RunSummary[] }>("/review-board/runs", {
        token: current.current.token,
      });
      setRuns(answer.runs);
      if (!current.current.runId && answer.runs.length > 0) setRunId(answer.runs[0].run_id);
      setError(null);
    }, onError), []);
  const loadBoard = useMemo(() =>
    coalesce(async () => {
      const id = current.current.runId;
      if (!id) return;
      const base = `/review-board/runs/${encodeURIComponent(id)}`;
      const token = current.current.token;
      const [answer, tasks] = await Promise.all([
        apiFetch<ProjectionReceipt>(base, { token }),
        apiFetch<RunOutline>(`${base}/tasks`, { token }),
      ]);
      if (current.current.runId === id) {
        setReceipt(answer);
        setOutline(tasks);
      }
      setError(null);
    }, onError), []);

  useEffect(() => {
    const query = new URLSearchParams(location.search);
    adoptFragmentToken();
    setToken(sessionStorage.getItem(TOKEN_KEY) ?? "");
    setRunId(query.get("run"));
    setSelected(query.get("task"));
    setReady(true);
  }, []);
  useEffect(() => {
    if (ready) loadRuns();
  }, [ready, token]);
  useEffect(() => {
    if (!ready || !runId) return;
    const query = new URLSearchParams({ run: runId });
    if (selected) query.set("task", selected);
    history.replaceState(null, "", `?${query}`);
  }, [ready, runId, selected]);
  useEffect(() => {
    if (ready && runId) loadBoard();
  }, [ready, runId, token]);
  useEffect(() => {
    if (!ready) return;
    return connectActivity({
      token,
      onState: setLive,
      onReady: () => {
        loadRuns();
        loadBoard();
        setActivity((n) => n + 1);
      },
      onActivity: (notice) => {
        setActivity((n) => n + 1);
        const { runId, runs } = current.current;
        if (typeof notice.run_id !== "string" || notice.run_id === runId) loadBoard();
        // the picker shows event counts and tamper marks, so any journal activity refreshes it
        if (typeof notice.run_id === "string" || !runs) loadRuns();
      },
    });
  }, [ready, token]);

  const shown = error !== null || runs?.length === 0 || (receipt !== null && outline !== null);
  useEffect(() => {
    if (shown) onShown?.();
  }, [shown]);

  const found = findCard(receipt, selected);
  const tasks = useMemo(
    () => new Map(outline?.tasks.map((t) => [t.task_id, t])),
    [outline],
  );
  const onBoard = new Set(
    receipt ? COLUMNS.flatMap((c) => receipt.board.columns[c].map((card) => card.task_id)) : [],
  );
  const notStarted = outline?.tasks.filter((t) => !onBoard.has(t.task_id)) ?? [];
  const run = runs?.find((r) => r.run_id === runId);
  return (
    <>
      <header class="top">
        <h1>Review board</h1>
        <TokenField token={token} onChange={setToken} />
        {runs && runs.length > 0 && (
          <RunPicker
            runs={runs}
            runId={runId}
            onChange={(id) => {
              setReceipt(null);
              setOutline(null);
              setSelected(null);
              setRunId(id);
            }}
          />
        )}
        <span class="live" data-state={live} aria-live="polite">
          updates: {LIVE_WORDS[live]}
        </span>
        {ready && <VerificationAlert token={token} tick={activity} />}
      </header>
      <main>
        {error && <p class="error" role="alert" data-error={error.status}>{error.words}</p>}
        {!ready || runs === null ? <p class="muted">loading runs…</p> : runs.length === 0
          ? (
            <p>
              No runs yet: a run appears here once .sdd/runs/&lt;run_id&gt;/journal.jsonl exists.
            </p>
          )
          : null}
        {receipt && (
          <>
            {run && (
              <p style="margin:0 0 .5rem">
                Run <span class="run-status" data-run-status={run.status}>{run.status}</span>
                {run.status === "interrupted" &&
                  " — its process is gone before the run ended; `service run` resumes it"}
              </p>
            )}
            <JournalReceipt
              receipt={receipt}
              disagreement={outline?.audit_disagreement?.message}
            />
            <BoardColumns
              board={receipt.board}
              tasks={tasks}
              evidence={outline?.evidence}
              selected={selected}
              onSelect={(id) => setSelected(id === selected ? null : id)}
            />
            <RunOutlineView
              tasks={notStarted}
              alreadyLanded={outline?.already_landed.length ?? 0}
              selected={selected}
              onSelect={(id) => setSelected(id === selected ? null : id)}
            />
            {selected && !found && !notStarted.some((t) => t.task_id === selected) && (
              <p class="muted">Task {selected} is not in this run.</p>
            )}
            {selected && (found || notStarted.some((t) => t.task_id === selected)) && (
              <TaskDetail
                key={selected}
                receipt={receipt}
                taskId={selected}
                card={found?.card}
                column={found?.column}
                task={tasks.get(selected)}
                token={token}
                onBoard={setReceipt}
                onReload={loadBoard}
              />
            )}
          </>
        )}
      </main>
    </>
  );
}

/**
 * A token given in the address's fragment (`#token=…`: a headless screenshot cannot type one,
 * and a fragment never reaches the server or a proxy's log) is kept for this tab like a typed
 * one, and taken out of the address bar and its history entry.
 */
function adoptFragmentToken(): void {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get("token");
  if (given === null) return;
  if (given.trim()) sessionStorage.setItem(TOKEN_KEY, given.trim());
  fragment.delete("token");
  const rest = fragment.toString();
  history.replaceState(
    history.state,
    "",
    location.pathname + location.search + (rest ? `#${rest}` : ""),
  );
}
