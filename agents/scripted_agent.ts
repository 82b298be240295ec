/**
 * A scripted coding agent: a real program that speaks the agent protocol of DESIGN.md §7, for
 * the demo and the end-to-end tests. It works in its current directory (the worktree), reads
 * its prompt from the last argument, runs the script found in the prompt between
 * "```agent-script" and "```" (one JSON array per line), and reports completion with
 * `POST $SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete`.
 *
 * Directives:
 *   ["write", path, text]        create or replace a file
 *   ["append", path, text]       append to a file
 *   ["run", command]             run `sh -c command`; a zero exit marks tests_run, non-zero exits 1
 *   ["print", text]              print a line (log scanners read it)
 *   ["sleep", ms]
 *   ["exit", code]               stop without reporting
 *   ["hang"]                     ignore SIGTERM, start a child that ignores it too, and wait forever
 *   ["report", summary?]         report completion now
 *   ["fail", reason]             report failure now (`POST /tasks/<id>/fail`)
 *   ["if_missing", path, [...]]  run the nested directives only while `path` does not exist
 *   ["if_exists", path, [...]]   run them only when `path` exists (work an earlier attempt left)
 *   ["first_attempt", [...]]     run the nested directives only on a first attempt
 *   ["retry", [...]]             run them only when the prompt carries a previous attempt's note
 *   ["require_prompt", text]     exit 1 unless the prompt contains text (checks what reached it)
 *   ["wait_follow_up", path]     read the operator's follow-ups (`GET /tasks/<id>/messages`, as
 *                                its prompt says) every 200 ms until one comes (at most 5
 *                                minutes); write the newest to `path`
 * Without a script it writes NOTES/<task>.md with the goal and reports.
 */
import { dirname } from "node:path";

type Directive = [string, ...unknown[]];

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Run the scripted agent on `prompt` in the current directory; resolves when the script ends. */
export async function runScriptedAgent(prompt: string): Promise<void> {
  const taskId = Deno.env.get("SERVICE_TASK_ID") ?? "task";
  const isRetry = /PREVIOUS ATTEMPT/.test(prompt);
  let testsRun = false;
  let reported = false;

  function parseScript(text: string): Directive[] {
    const block = /```agent-script\n([\s\S]*?)```/.exec(text);
    if (!block) {
      return [["write", `NOTES/${taskId}.md`, `# ${taskId}\n\n${text.slice(0, 400)}\n`], [
        "report",
        "notes written",
      ]];
    }
    return block[1].split("\n").map((l) => l.trim()).filter((l) => l.length > 0).map((l) =>
      JSON.parse(l)
    );
  }

  async function report(outcome: "complete" | "fail", summary: string): Promise<void> {
    const base = Deno.env.get("SERVICE_SERVER_URL");
    if (!base) throw new Error(`SERVICE_SERVER_URL is not set: cannot report (${outcome})`);
    const token = Deno.env.get("SERVICE_TOKEN");
    const res = await fetch(`${base}/tasks/${taskId}/${outcome}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(
        outcome === "complete"
          ? { summary, tests_run: testsRun, session_id: Deno.env.get("SERVICE_SESSION_ID") }
          : { reason: summary, session_id: Deno.env.get("SERVICE_SESSION_ID") },
      ),
    });
    console.log(`reported ${outcome}: HTTP ${res.status} ${await res.text()}`);
    reported = true;
  }

  /**
   * Poll the task's follow-ups as its prompt says (`GET /tasks/<id>/messages` with the session's
   * credential) every 200 ms until one comes, for at most 5 minutes; the newest one's text.
   */
  async function waitFollowUp(): Promise<string> {
    const base = Deno.env.get("SERVICE_SERVER_URL");
    if (!base) throw new Error("SERVICE_SERVER_URL is not set: cannot read follow-ups");
    const token = Deno.env.get("SERVICE_TOKEN");
    const until = Date.now() + 300_000;
    while (Date.now() < until) {
      const res = await fetch(`${base}/tasks/${taskId}/messages`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      if (!res.ok) throw new Error(`GET messages: HTTP ${res.status} ${await res.text()}`);
      const body = await res.json() as { messages?: { text: string }[] };
      const newest = body.messages?.at(-1);
      if (newest) return newest.text;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error("no follow-up came within 5 minutes");
  }

  async function run(directives: Directive[]): Promise<void> {
    for (const [op, ...args] of directives) {
      switch (op) {
        case "write":
        case "append": {
          const [path, text] = args as [string, string];
          await Deno.mkdir(dirname(path), { recursive: true });
          await Deno.writeTextFile(path, text, { append: op === "append" });
          console.log(`${op} ${path}`);
          break;
        }
        case "run": {
          const command = args[0] as string;
          console.log(`$ ${command}`);
          const out = await new Deno.Command("sh", {
            args: ["-c", command],
            stdout: "inherit",
            stderr: "inherit",
          })
            .output();
          if (!out.success) {
            console.log(`command failed with exit ${out.code}`);
            Deno.exit(1);
          }
          testsRun = true;
          break;
        }
        case "print":
          console.log(args[0]);
          break;
        case "sleep":
          await new Promise((r) => setTimeout(r, args[0] as number));
          break;
        case "exit":
          Deno.exit(args[0] as number);
          break;
        case "hang":
          Deno.addSignalListener("SIGTERM", () => console.log("ignoring SIGTERM"));
          // The session id in the command line lets a test find exactly this tree's survivors.
          new Deno.Command("sh", {
            args: ["-c", `trap '' TERM; sleep 3600; : ${Deno.env.get("SERVICE_SESSION_ID")}`],
          }).spawn();
          console.log("hanging");
          await new Promise(() => {});
          break;
        case "report":
          await report("complete", (args[0] as string) ?? "done");
          break;
        case "fail":
          await report("fail", args[0] as string);
          Deno.exit(0);
          break;
        case "if_missing":
          if (!(await exists(args[0] as string))) await run(args[1] as Directive[]);
          break;
        case "if_exists":
          if (await exists(args[0] as string)) await run(args[1] as Directive[]);
          break;
        case "wait_follow_up": {
          const text = await waitFollowUp();
          await Deno.writeTextFile(args[0] as string, text + "\n");
          console.log(`follow-up read: ${text}`);
          break;
        }
        case "require_prompt":
          if (!prompt.includes(args[0] as string)) {
            console.log(`the prompt lacks ${JSON.stringify(args[0])}`);
            Deno.exit(1);
          }
          break;
        case "first_attempt":
          if (!isRetry) await run(args[0] as Directive[]);
          break;
        case "retry":
          if (isRetry) await run(args[0] as Directive[]);
          break;
        default:
          throw new Error(`unknown directive ${JSON.stringify(op)}`);
      }
    }
  }

  console.log(`scripted agent for ${taskId}${isRetry ? " (retry)" : ""}`);
  await run(parseScript(prompt));
  if (!reported) console.log("finished without reporting");
}

if (import.meta.main) await runScriptedAgent(Deno.args.at(-1) ?? "");
