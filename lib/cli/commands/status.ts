/** `service status`: the status object, from the running server or from the workspace files. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import { appContext } from "../../server/serve.ts";
import { collectStatus } from "../../status/status.ts";
import { formatStatus } from "../../status/format.ts";
import { serverUrlFor, TaskClient, TaskStoreUnavailable } from "../../tasks/client.ts";

export const statusCommand: Command = {
  name: "status",
  summary: "tasks, agents, spend and the verification alert",
  help: `Usage: service status [--json] [--offline] [--root DIR]

Asks the running server (GET /status); when none answers, reads the workspace files
(.sdd/backlog, .sdd/metrics/verification_nudges.jsonl, .sdd/runtime/...). Prints a red ALERT
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
    let source = "workspace files; no server running";
    if (!values.offline) {
      const url = await serverUrlFor(ctx.root);
      try {
        status = await new TaskClient({ url, timeoutMs: 2000 }).status();
        source = `server ${url}`;
        if (status.workspace !== ctx.root) {
          source += ` serving ${status.workspace}`;
        }
      } catch (e) {
        if (!(e instanceof TaskStoreUnavailable)) throw e;
      }
    }
    status ??= await collectStatus(appContext(ctx.root, [])) as Record<string, unknown>;
    if (values.json) ctx.stdout(JSON.stringify(status, null, 2));
    else for (const line of formatStatus(status, source, colour)) ctx.stdout(line);
    return 0;
  },
};
