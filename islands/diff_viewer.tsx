/**
 * The diff viewer island: fetches a task's diff, parses it once, and lists each file as a
 * collapsed summary. A file's lines are rendered only when it is expanded, and a very long
 * file in chunks, so a 20 000-line diff never blocks the tab.
 */
import { useMemo, useState } from "preact/hooks";
import { type DiffFile, parseUnifiedDiff } from "../lib/diff/parse.ts";
import type { DiffResponse } from "../lib/review/types.ts";
import {
  DiffFileToggle,
  DiffHeader,
  DiffLines,
  NoDiffCaptured,
  rowCount,
} from "./parts/diff_view.tsx";
import { useApi } from "./_use_api.ts";

/** Rows rendered per expansion step of one file. */
const ROWS_PER_STEP = 5000;

/** Rows to show after one more step from `shown`: a small remainder is not left behind. */
function nextLimit(shown: number, total: number): number {
  const next = shown + ROWS_PER_STEP;
  return next + ROWS_PER_STEP / 5 >= total ? total : next;
}

/** Props of {@link DiffViewer}. */
export interface DiffViewerProps {
  runId: string;
  taskId: string;
  token: string;
  /** Changes when the diff under review may have changed (new capture, journal state). */
  version: string;
  /** Protected paths the diff touches (DESIGN.md §18): their files are marked. */
  protectedPaths?: readonly string[];
  /**
   * False when the board has no `task_diff_captured` row for the task: "no diff captured" is
   * shown without requesting the diff (whose 404 the browser would log as an error).
   */
  captured?: boolean;
}

function FileEntry(
  { file, index, guarded }: { file: DiffFile; index: number; guarded: boolean },
) {
  const [limit, setLimit] = useState(0);
  const total = rowCount(file);
  const id = `diff-file-${index}`;
  return (
    <li>
      <DiffFileToggle
        file={file}
        expanded={limit > 0}
        controls={id}
        guarded={guarded}
        onToggle={() => setLimit(limit > 0 ? 0 : nextLimit(0, total))}
      />
      <div class="diff-body" id={id} hidden={limit === 0}>
        {limit > 0 && <DiffLines file={file} limit={limit} />}
        {limit > 0 && limit < total && (
          <button
            type="button"
            onClick={() => setLimit(limit + ROWS_PER_STEP)}
          >
            Show {Math.min(ROWS_PER_STEP, total - limit)} more lines ({total - limit} hidden)
          </button>
        )}
      </div>
    </li>
  );
}

/** The diff of one task, or "no diff captured". */
export function DiffViewer(props: DiffViewerProps) {
  return props.captured === false ? <NoDiffCaptured /> : <FetchedDiff {...props} />;
}

/** The diff fetched from the server. */
function FetchedDiff(
  { runId, taskId, token, version, protectedPaths = [] }: DiffViewerProps,
) {
  const path = `/review-board/runs/${encodeURIComponent(runId)}/diff/${encodeURIComponent(taskId)}`;
  const state = useApi<DiffResponse>(path, token, version);
  const files = useMemo(
    () => (state.status === "ok" ? parseUnifiedDiff(state.value.diff_text) : []),
    [state],
  );
  if (state.status === "loading") return <p class="muted">loading diff…</p>;
  if (state.status === "error") {
    if (state.error.code === "no_diff_captured") return <NoDiffCaptured />;
    return <p class="error" role="alert">{state.error.words}</p>;
  }
  return (
    <div data-diff-viewer>
      <DiffHeader diff={state.value} />
      {files.length === 0 ? <p class="muted">The captured diff is empty.</p> : (
        <ul class="files">
          {files.map((file, i) => (
            <FileEntry
              key={`${i}:${file.path}`}
              file={file}
              index={i}
              guarded={protectedPaths.includes(file.path) ||
                (file.oldPath !== undefined && protectedPaths.includes(file.oldPath))}
            />
          ))}
        </ul>
      )}
    </div>
  );
}
