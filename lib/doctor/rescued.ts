/**
 * Which rescued work (`refs/service/rescue/<session>`, kept when an attempt's work did not land)
 * is still unmerged: not the work the checked-out branch already holds, and not the work of a
 * task that merged since (a later attempt landed the task, so what an earlier one left is not
 * "work that was not merged"). `doctor` warns only about the rest (issue 35).
 */
import { join } from "node:path";
import { git } from "../git/git.ts";
import type { RescueRef } from "../worktrees/reap.ts";
import type { WorkspacePaths } from "../workspace.ts";

/** What the run journals say of sessions and landings. */
export interface LandingFacts {
  /** Each claimed session's task. */
  sessionTask: Map<string, string>;
  /** Tasks with a `task_merged` row. */
  merged: Set<string>;
}

/** Rescue refs left unmerged: neither held by the branch nor of a task that merged (pure). */
export function unmergedRescues(
  refs: readonly RescueRef[],
  facts: LandingFacts & { heldByBranch: ReadonlySet<string> },
): RescueRef[] {
  return refs.filter((r) => {
    if (facts.heldByBranch.has(r.ref)) return false;
    const task = facts.sessionTask.get(r.session_id);
    return task === undefined || !facts.merged.has(task);
  });
}

/** The sessions and merges every run journal of the workspace records (unparsable lines skipped). */
export async function landingFacts(paths: WorkspacePaths): Promise<LandingFacts> {
  const facts: LandingFacts = { sessionTask: new Map(), merged: new Set() };
  let runs: Deno.DirEntry[];
  try {
    runs = await Array.fromAsync(Deno.readDir(paths.runs));
  } catch {
    return facts;
  }
  for (const run of runs) {
    let text: string;
    try {
      text = await Deno.readTextFile(join(paths.runs, run.name, "journal.jsonl"));
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (!line.includes('"task_claimed"') && !line.includes('"task_merged"')) continue;
      try {
        const row = JSON.parse(line) as { type?: string; data?: Record<string, unknown> };
        const task = row.data?.task_id;
        if (typeof task !== "string") continue;
        if (row.type === "task_merged") facts.merged.add(task);
        else if (row.type === "task_claimed" && typeof row.data?.session_id === "string") {
          facts.sessionTask.set(row.data.session_id, task);
        }
      } catch { /* a torn line: doctor's journal check reports it */ }
    }
  }
  return facts;
}

/** The refs of `refs` whose commit the checked-out branch (HEAD) already holds. */
export async function heldByHead(root: string, refs: readonly RescueRef[]): Promise<Set<string>> {
  const held = new Set<string>();
  for (const r of refs) {
    const out = await git(["merge-base", "--is-ancestor", r.commit, "HEAD"], {
      cwd: root,
      allowFailure: true,
    });
    if (out.code === 0) held.add(r.ref);
  }
  return held;
}
