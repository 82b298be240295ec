/**
 * The patch of a batch answer, and applying it (DESIGN.md §15). {@link patchIn} is pure: the
 * answer's ```diff block (or the text from its first `diff --git` / `--- a/` line), or why there
 * is none. {@link applyPatch} runs `git apply --3way --recount` in the task's worktree — three-way
 * when the patch names blobs the repository has, and hunk line counts recounted, since a model's
 * counts are often off by one — and commits what applied.
 */
import { commitPartialWork } from "../worktrees/worktrees.ts";
import { openWorktree } from "../worktrees/trees.ts";

/** The diff of an answer, or why it has none. */
export type PatchFound = { patch: string } | { problem: string };

/** The unified diff in a model's answer. */
export function patchIn(answer: string): PatchFound {
  const refusal = /^\s*CANNOT_APPLY\b[:\s]*(.*)$/m.exec(answer);
  if (refusal) {
    return { problem: `the model answered CANNOT_APPLY: ${refusal[1].trim() || "no reason"}` };
  }
  const fenced = /```(?:diff|patch|udiff)[^\n]*\n([\s\S]*?)```/.exec(answer);
  let patch = fenced?.[1];
  if (patch === undefined) {
    const start = /^(?:diff --git |--- (?:a\/|\/dev\/null))/m.exec(answer);
    if (start) patch = answer.slice(start.index).replace(/\n```[\s\S]*$/, "\n");
  }
  if (patch === undefined || !/^@@ /m.test(patch) && !/^(?:new|deleted) file mode/m.test(patch)) {
    return { problem: "the answer holds no unified diff" };
  }
  return { patch: patch.endsWith("\n") ? patch : patch + "\n" };
}

/** What applying a patch did. */
export type ApplyOutcome =
  | { applied: true; files: number; tip: string }
  | { applied: false; reason: string };

/** Apply `patch` in the worktree at `worktree` and commit it with `message`. */
export async function applyPatch(
  worktree: string,
  patch: string,
  message: string,
): Promise<ApplyOutcome> {
  // A model's patch is the agent's work: applied with the hardened git of agent trees.
  const tree = await openWorktree(worktree);
  const out = await tree.git(["apply", "--3way", "--recount", "--whitespace=nowarn", "-"], {
    stdin: patch,
    allowFailure: true,
  });
  if (out.code !== 0) {
    const said = out.stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
    // Without blob ids in the patch git falls back to a direct apply; its errors say why.
    const errors = said.filter((l) => /^error:/.test(l) && !/necessary blob/.test(l));
    const line = errors.map((l) => l.replace(/^error:\s*/, "")).join("; ") || said.at(-1) ||
      `exit ${out.code}`;
    return { applied: false, reason: `git apply --3way: ${line}` };
  }
  const files = (await tree.git(["diff", "--cached", "--name-only"])).stdout
    .split("\n").filter((l) => l !== "").length;
  if (files === 0) return { applied: false, reason: "the patch changes nothing" };
  const { tip } = await commitPartialWork(worktree, message, { tree });
  return { applied: true, files, tip };
}
