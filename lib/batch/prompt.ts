/**
 * A batch request's words (pure, DESIGN.md §15): closed-form, one answer, no tools. The system
 * part is the role's system prompt and the rules of the answer; the user part is the task prompt
 * (goal, owned files, done-when) with the answer's form where an agent's reporting instructions
 * would be, then the named files as they are at the commit the patch applies to, then the note
 * of an earlier attempt.
 */
import { renderTaskPrompt, type RoleTemplate } from "../roles/templates.ts";
import type { Task } from "../tasks/task.ts";

/** A file the request shows, as it is at the base commit. */
export interface ShownFile {
  path: string;
  /** Its text; undefined when it does not exist yet (the task may create it). */
  text?: string;
  /** Why its text is left out (binary, too large), when it is. */
  omitted?: string;
}

/** The two parts of a request's prompt. */
export interface BatchPrompt {
  system: string;
  user: string;
}

/** How the answer must look (where an agent reads how to report). */
const ANSWER_FORM = `You answer once, without tools: you cannot run commands, read other
files or call the task server. Reply with the complete change as ONE unified diff (the output of
\`git diff\`) in a single fenced block:

\`\`\`diff
diff --git a/path/to/file b/path/to/file
--- a/path/to/file
+++ b/path/to/file
@@ -1,3 +1,4 @@
 context line
+added line
\`\`\`

Paths are relative to the repository root with a/ and b/ prefixes; a new file comes from
/dev/null; hunks carry three lines of context and exact line numbers of the files shown below.
Nothing outside the block is applied. If the goal cannot be met from the files shown, reply
with the single line CANNOT_APPLY and the reason.`;

/** The prompt of `task`'s batch request. */
export function batchPrompt(
  template: RoleTemplate,
  task: Task,
  files: readonly ShownFile[],
  note?: string,
): BatchPrompt {
  const shown = files.map((f) =>
    f.text !== undefined
      ? `### ${f.path}\n\n\`\`\`\n${f.text}${
        f.text.endsWith("\n") || f.text === "" ? "" : "\n"
      }\`\`\``
      : `### ${f.path}\n\n(${f.omitted ?? "does not exist yet"})`
  );
  const parts = [
    renderTaskPrompt(template, task, ANSWER_FORM),
    "## The files, as they are now",
    shown.length > 0 ? shown.join("\n\n") : "(the task names no files: owned_files is empty)",
  ];
  if (note) parts.push(`## An earlier attempt\n\n${note}`);
  return {
    system: `${template.systemPrompt.trimEnd()}\n\n${ANSWER_FORM}`,
    user: parts.join("\n\n") + "\n",
  };
}
