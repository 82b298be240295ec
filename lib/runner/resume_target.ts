/**
 * A run resumes onto the branch it started on. Its `run_started` row names that branch; when the
 * user's checkout is on another one now (they switched, or renamed the branch), `service run`
 * stops before it journals anything instead of landing the rest of the run somewhere else.
 */
import { RunError } from "./run_checks.ts";

/** The `target_branch` of the run's `run_started` row (the journal's first line), if it has one. */
export async function journaledTarget(journal: string): Promise<string | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(journal);
  } catch {
    return undefined;
  }
  try {
    // The first row is small next to the rest of a long run: read only up to its newline.
    let bytes = new Uint8Array(0);
    const buf = new Uint8Array(64 * 1024);
    while (!bytes.includes(10) && bytes.length < 4 * 1024 * 1024) {
      const n = await file.read(buf);
      if (n === null) break;
      const next = new Uint8Array(bytes.length + n);
      next.set(bytes);
      next.set(buf.subarray(0, n), bytes.length);
      bytes = next;
    }
    const end = bytes.indexOf(10);
    const text = new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
    const row = JSON.parse(text);
    const target = row?.type === "run_started" ? row.data?.target_branch : undefined;
    return typeof target === "string" && target !== "" ? target : undefined;
  } catch {
    return undefined; // a journal that does not parse is reported by its own check
  } finally {
    file.close();
  }
}

/** Throws a {@link RunError} when `runId` started on another branch than `targetBranch`. */
export function refuseMovedTarget(o: {
  runId: string;
  started: string | undefined;
  targetBranch: string;
}): void {
  if (o.started === undefined || o.started === o.targetBranch) return;
  throw new RunError(
    `run ${o.runId} started on ${o.started}, but the checkout is on ${o.targetBranch} now: ` +
      `resuming here would land the rest of its work on ${o.targetBranch}`,
    1,
    `switch back (\`git switch ${o.started}\`; if you renamed it, rename it back) and ` +
      "`service run` resumes the run; or `service cancel --all` to give up its unfinished tasks",
  );
}
