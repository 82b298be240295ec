/** `service status`: the status object, from the running server or from the workspace files. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import { appContext } from "../../server/serve.ts";
import { collectStatus } from "../../status/status.ts";
import { formatStatus } from "../../status/format.ts";
import { TaskClient, TaskStoreUnavailable } from "../../tasks/client.ts";
import { findWorkspaceServer } from "../../discovery/find.ts";

/** True when `served` (a server's `workspace`) is the workspace at `root`. */
async function sameWorkspace(served: unknown, root: string): Promise<boolean> {
  if (typeof served !== "string") return false;
  const real = (p: string) => Deno.realPath(p).catch(() => p);
  return served === root || await real(served) === await real(root);
}

/** `service status`: tasks, agents, spend and the verification alert. */
export const statusCommand: Command = {
  name: "status",
  summary: "tasks, agents, spend and the verification alert",
  help: `Usage: service status [--json] [--offline] [--root DIR]

Asks the workspace's own server (GET /status), on whatever port it was started: the one
.sdd/runtime/server.json names, once it proves it serves this workspace (SERVICE_SERVER_URL
overrides). With none, reads the workspace files (.sdd/backlog,
.sdd/metrics/verification_nudges.jsonl, .sdd/runtime/...); a server of another workspace is
never reported as this one's. Prints a red ALERT
when the share of unverified completions is over the threshold, a yellow notice when any
completion is unverified.

Options:
  --json      print the status object as JSON
  --offline   do not contact the server; read the files only`,
  async run(args, ctx) {
    const { values } = parseArgs({
      args,
      options: {
        json: { type: "boolean", default: false },
        offline: { type: "boolean", default: false },
      },
    });
    let status: Record<string, unknown> | undefined;
    let source = "workspace files; no server running for this workspace";
    if (!values.offline) {
      const search = await findWorkspaceServer(ctx.root);
      if (search.found) {
        const { url, via } = search.found;
        try {
          const answer = await new TaskClient({ url, timeoutMs: 2000 }).status();
          // A server named by SERVICE_SERVER_URL proved nothing: its answer counts only when it
          // serves this workspace (one found through server.json proved it already).
          if (via === "server.json" || await sameWorkspace(answer.workspace, ctx.root)) {
            status = answer;
            source = `server ${url}`;
          } else {
            ctx.stderr(colour.yellow(
              `note: SERVICE_SERVER_URL (${url}) serves ${answer.workspace}, not this workspace`,
            ));
          }
        } catch (e) {
          if (!(e instanceof TaskStoreUnavailable)) throw e;
          ctx.stderr(colour.yellow(`note: ${e.message}`));
        }
      } else if (search.notable) {
        ctx.stderr(colour.yellow(`note: ${search.why}`));
      }
    }
    status ??= await collectStatus(appContext(ctx.root, [])) as Record<string, unknown>;
    if (values.json) ctx.stdout(JSON.stringify(status, null, 2));
    else for (const line of formatStatus(status, source, colour)) ctx.stdout(line);
    return 0;
  },
};
