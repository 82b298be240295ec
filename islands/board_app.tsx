/**
 * The board app island: token, run picker, live status, the board of the chosen run and the
 * selected task. It holds no board state of its own: every board it shows is a projection
 * receipt the server answered (a GET, or the `board` of a review receipt).
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Column, COLUMNS } from "../lib/board/types.ts";
import type { ProjectionReceipt } from "../lib/board/types.ts";
import type { RunSummary } from "../lib/runs/summary_types.ts";
import type { RunOutline } from "../lib/review/types.ts";
import { RunOutlineView } from "./parts/run_outline.tsx";
import type { OutlineTask } from "../lib/board/activity_types.ts";
import { ApiError, apiFetch } from "../lib/dashboard/api.ts";
import { coalesce } from "../lib/dashboard/coalesce.ts";
import { connectActivity, type LiveState } from "../lib/dashboard/live.ts";
import { BoardColumns } from "./parts/board_columns.tsx";
import { JournalReceipt } from "./parts/journal_receipt.tsx";
import { TOKEN_KEY, TokenField } from "./token_field.tsx";
import { RunPicker } from "./run_picker.tsx";
import { TaskDetail } from "./task_detail.tsx";
import { StatusAlerts } from "./status_alerts.tsx";
import { NewTaskForm } from "./operator_actions.tsx";

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

  const { loadRuns, loadBoard } = useLoaders(current, {
    setRuns,
    setRunId,
    setReceipt,
    setOutline,
    setError,
  });

  useEffect(() => {
    const query = new URLSearchParams(location.search);
    setToken(tokenOfTab());
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

  const tasks = useMemo(() => new Map(outline?.tasks.map((t) => [t.task_id, t])), [outline]);
  const onBoard = new Set(
    receipt ? COLUMNS.flatMap((c) => receipt.board.columns[c].map((card) => card.task_id)) : [],
  );
  const notStarted = outline?.tasks.filter((t) => !onBoard.has(t.task_id)) ?? [];
  const run = runs?.find((r) => r.run_id === runId);
  const select = (id: string) => setSelected(id === selected ? null : id);
  return (
    <>
      <BoardHeader
        token={token}
        onToken={setToken}
        runs={runs}
        runId={runId}
        onRun={(id) => {
          setReceipt(null);
          setOutline(null);
          setSelected(null);
          setRunId(id);
        }}
        live={live}
        alert={ready ? activity : undefined}
      />
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
          <RunBoard
            receipt={receipt}
            outline={outline}
            run={run}
            tasks={tasks}
            notStarted={notStarted}
            selected={selected}
            onSelect={select}
            token={token}
            onBoard={setReceipt}
            onReload={loadBoard}
          />
        )}
        {ready && <NewTaskForm token={token} />}
      </main>
    </>
  );
}

/** What the page remembers between renders for the loaders (they outlive a render). */
interface Current {
  token: string;
  runId: string | null;
  runs: RunSummary[] | null;
}

/** Where the loaders put what they read. */
interface LoadedInto {
  setRuns: (runs: RunSummary[]) => void;
  setRunId: (runId: string) => void;
  setReceipt: (receipt: ProjectionReceipt) => void;
  setOutline: (outline: RunOutline) => void;
  setError: (error: ApiError | null) => void;
}

/**
 * The runs list and the chosen run's board and outline, each read by one coalesced loader (a
 * burst of activity notices reads once more, not once per notice).
 */
function useLoaders(current: { current: Current }, into: LoadedInto) {
  const onError = (e: unknown) =>
    into.setError(e instanceof ApiError ? e : new ApiError(0, "error", String(e)));
  const loadRuns = useMemo(() =>
    coalesce(async () => {
      const answer = await apiFetch<{ runs: RunSummary[] }>("/review-board/runs", {
        token: current.current.token,
      });
      into.setRuns(answer.runs);
      if (!current.current.runId && answer.runs.length > 0) into.setRunId(answer.runs[0].run_id);
      into.setError(null);
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
        into.setReceipt(answer);
        into.setOutline(tasks);
      }
      into.setError(null);
    }, onError), []);
  return { loadRuns, loadBoard };
}

/** Props of {@link BoardHeader}. */
interface BoardHeaderProps {
  token: string;
  onToken: (token: string) => void;
  runs: RunSummary[] | null;
  runId: string | null;
  onRun: (runId: string) => void;
  live: LiveState | "off";
  /** The activity tick the verification alert re-reads on; undefined until the page is ready. */
  alert: number | undefined;
}

/** The page's header: title, token, run picker, live state, the alerts of `/status`. */
function BoardHeader({ token, onToken, runs, runId, onRun, live, alert }: BoardHeaderProps) {
  return (
    <header class="top">
      <h1>Review board</h1>
      <TokenField token={token} onChange={onToken} />
      {runs && runs.length > 0 && <RunPicker runs={runs} runId={runId} onChange={onRun} />}
      <span class="live" data-state={live} aria-live="polite">
        updates: {LIVE_WORDS[live]}
      </span>
      {alert !== undefined && <StatusAlerts token={token} tick={alert} />}
    </header>
  );
}

/** Props of {@link RunBoard}. */
interface RunBoardProps {
  receipt: ProjectionReceipt;
  outline: RunOutline | null;
  run: RunSummary | undefined;
  tasks: Map<string, OutlineTask>;
  /** The outline's tasks that have no card. */
  notStarted: OutlineTask[];
  selected: string | null;
  onSelect: (taskId: string) => void;
  token: string;
  onBoard: (receipt: ProjectionReceipt) => void;
  onReload: () => void;
}

/** The chosen run: its status, receipt, columns, tasks not started and the selected task. */
function RunBoard(props: RunBoardProps) {
  const { receipt, outline, run, tasks, notStarted, selected, onSelect } = props;
  const found = findCard(receipt, selected);
  return (
    <>
      {run && (
        <p style="margin:0 0 .5rem">
          Run <span class="run-status" data-run-status={run.status}>{run.status}</span>
          {run.status === "interrupted" &&
            " — its process is gone before the run ended; `service run` resumes it"}
          {run.status === "unverified" &&
            " — its journal does not verify, so it cannot be resumed and its rows are not taken at their word (below)"}
        </p>
      )}
      <JournalReceipt
        receipt={receipt}
        damage={run?.journal_damage?.words}
        disagreement={outline?.audit_disagreement?.message}
        ignored={outline?.ignored_rows}
      />
      <BoardColumns
        board={receipt.board}
        tasks={tasks}
        evidence={outline?.evidence}
        selected={selected}
        onSelect={onSelect}
      />
      <RunOutlineView
        tasks={notStarted}
        alreadyLanded={outline?.already_landed.length ?? 0}
        selected={selected}
        onSelect={onSelect}
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
          token={props.token}
          onBoard={props.onBoard}
          onReload={props.onReload}
        />
      )}
    </>
  );
}

/**
 * The tab's token. One given in the address's fragment (`#token=…`: a headless screenshot cannot
 * type one, and a fragment never reaches the server or a proxy's log) is kept for this tab like a
 * typed one, and taken out of the address bar and its history entry.
 */
function tokenOfTab(): string {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get("token");
  if (given !== null) {
    if (given.trim()) sessionStorage.setItem(TOKEN_KEY, given.trim());
    fragment.delete("token");
    const rest = fragment.toString();
    history.replaceState(
      history.state,
      "",
      location.pathname + location.search + (rest ? `#${rest}` : ""),
    );
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}
