/** `service cancel <task>… | --all`: cancel tasks; a running agent is ended, its work kept. */
import { DomainError } from "../../errors.ts";
import { parseArgs } from "node:util";
import { CliError, type Command } from "../command.ts";
import {
  CANCELLABLE,
  journalOperatorChange,
  openTaskControl,
  reapCancelled,
} from "../../orchestrator/task_control.ts";
import { HttpApiError } from "../../http/api_error.ts";
import { sweepSettledRuns } from "../../workers/settled_run_sweep.ts";
import { printable } from "../../util/printable.ts";
import { readRunState } from "../../runs/run_state.ts";
import { processAlive } from "../../util/process_alive.ts";
import { workspacePaths } from "../../workspace.ts";

/**
 * The run `service retry --all` serves: the one the run state names when it has tasks, else
 * the newest run id among the tasks (run ids sort by their start time).
 */
function latestRun(tasks: { run_id?: string | null }[], named: string | undefined) {
  const runs = tasks.flatMap((t) => t.run_id ? [t.run_id] : []);
  if (named && runs.includes(named)) return named;
  return runs.sort().at(-1);
}

export const cancelCommand: Command = {
  name: "cancel",
  summary: "cancel tasks (a running agent is ended; its work stays on a rescue ref)",
  help: `Usage: service cancel <task>... [--reason TEXT] [--root DIR]
       service cancel --all [--reason TEXT] [--root DIR]

Moves each task to CANCELLED: OPEN, BLOCKED, claimed, ORPHANED, or DONE but not merged yet. A
running agent gets SIGTERM (then SIGKILL after the grace) and its partial work is kept on a rescue
ref (\`service doctor\` lists them). The run journal records the cancel with its reason, so the
board shows the card under gated. Tasks that only waited on a cancelled task may start (spec
§3.1: cancelling the blocking task unblocks them).

Works while a run is live (through its task API) and when nothing runs (on the task store).
\`service retry <task>\` undoes a cancel.

Options:
  --all          every unfinished task of the workspace
  --reason TEXT  why (shown in the journal, on the board and by \`status\`)`,
  async run(args, ctx) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { all: { type: "boolean", default: false }, reason: { type: "string" } },
    });
    if (values.all === (positionals.length > 0)) {
      throw new CliError(
        "name the tasks to cancel (`service cancel <task>...`) or pass --all, not both",
      );
    }
    return await changeTasks(ctx, {
      kind: "cancel",
      ids: positionals,
      all: values.all!,
      reason: values.reason,
    });
  },
};

/** What {@link changeTasks} does, and to which tasks. */
export interface TaskChange {
  kind: "cancel" | "retry";
  /** The tasks named on the command line (ignored with `all`). */
  ids: string[];
  /** Every eligible task instead of `ids`. */
  all: boolean;
  /** Why (a cancel's `--reason`). */
  reason?: string;
}

/** Cancel or retry `ids` (or every eligible task), journaling each change in its run. */
export async function changeTasks(
  ctx: { root: string; stdout: (l: string) => void; stderr: (l: string) => void },
  { kind, ids, all, reason }: TaskChange,
): Promise<number> {
  const eligible = kind === "cancel" ? CANCELLABLE : new Set(["FAILED", "CANCELLED"]);
  const control = await openTaskControl(ctx.root);
  const live = kind === "retry" ? await liveRunId(ctx.root) : undefined;
  let failures = 0;
  const settledBy = new Set<string>(); // runs this command cancelled tasks of, with no run live
  try {
    const tasks = await control.list();
    let targets = all ? tasks.filter((t) => eligible.has(t.status)).map((t) => t.id) : ids;
    if (all && kind === "retry") {
      // The latest run's tasks: what earlier, finished runs left FAILED or CANCELLED stays so
      // (a task cancelled last week is not reopened by today's retry); name one to retry it.
      const latest = latestRun(tasks, (await readRunState(workspacePaths(ctx.root)))?.run_id);
      const older = targets.filter((id) => tasks.find((t) => t.id === id)?.run_id !== latest);
      targets = targets.filter((id) => !older.includes(id));
      if (older.length > 0) {
        ctx.stdout(
          `${older.length} FAILED or CANCELLED task(s) of earlier runs left as they are (` +
            `${older.slice(0, 6).join(", ")}${older.length > 6 ? ", …" : ""}); ` +
            "`service retry <task>` retries one",
        );
      }
    }
    if (targets.length === 0) {
      ctx.stdout(`no task to ${kind}`);
      return 0;
    }
    for (const id of targets) {
      const task = tasks.find((t) => t.id === id);
      if (!task) {
        ctx.stderr(`${printable(id)}: no such task (\`service status\` lists them)`);
        failures++;
        continue;
      }
      if (!eligible.has(task.status)) {
        ctx.stderr(
          `${id}: is ${task.status}; only ${[...eligible].join(", ")} tasks can be ${
            kind === "cancel" ? "cancelled" : "retried"
          }`,
        );
        failures++;
        continue;
      }
      const was = task.status; // the store may update `task` itself
      try {
        const changed = kind === "cancel"
          ? await control.cancel(id, reason)
          : await control.retry(id);
        // Through a server, its route journaled it; on the store opened here, this command does.
        // A run whose journal does not verify refuses the row (the server's answer says so too).
        const { journaled, refused } = control.via === "store"
          ? await journalOperatorChange(ctx.root, kind, changed)
          : { journaled: false, refused: (changed as { not_journaled?: string }).not_journaled };
        ctx.stdout(
          kind === "cancel"
            ? `${id}: CANCELLED (was ${was})`
            : `${id}: ${changed.status} again (was ${was}); ${
              live !== undefined && changed.run_id === live
                ? `the running run ${live} takes it now`
                : "`service run` runs it"
            }`,
        );
        if (refused) ctx.stdout(`  ${printable(refused)}`);
        // No live run reaps its worktree: this command does (a server's route does its own).
        if (journaled || refused) {
          (await reapCancelled(ctx.root, changed)).forEach((l) => ctx.stdout(l));
        }
        if (journaled && kind === "cancel" && changed.run_id) settledBy.add(changed.run_id);
      } catch (e) {
        // A refusal from the server (HttpApiError) or from the store itself (DomainError).
        if (!(e instanceof HttpApiError) && !(e instanceof DomainError)) throw e;
        ctx.stderr(printable(`${id}: ${(e as Error).message}`)); // a server's words
        failures++;
      }
    }
    // A stopped run whose last tasks this settled is over: its refs leave the shared remote.
    if (settledBy.size > 0) {
      const now = await control.list();
      (await sweepSettledRuns(ctx.root, { runIds: settledBy, tasks: now })).forEach(ctx.stdout);
    }
  } finally {
    await control.close();
  }
  return failures > 0 ? 1 : 0;
}

/** The run whose process runs now in the workspace at `root`, if one does. */
async function liveRunId(root: string): Promise<string | undefined> {
  const state = await readRunState(workspacePaths(root));
  return state?.status === "running" && processAlive(state.pid) ? state.run_id : undefined;
}
