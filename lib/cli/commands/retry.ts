/** `service retry <task>…`: a FAILED or CANCELLED task gets new attempts. */
import { parseArgs } from "node:util";
import { CliError, type Command } from "../command.ts";
import { changeTasks } from "./cancel.ts";

export const retryCommand: Command = {
  name: "retry",
  summary: "give FAILED or CANCELLED tasks new attempts",
  help: `Usage: service retry <task>... [--root DIR]
       service retry --all [--root DIR]

Moves each FAILED or CANCELLED task back to OPEN (BLOCKED while a dependency is unsatisfied)
with its attempts reset; tasks that waited on it wait for its new attempt. The run journal
records the retry, so the board moves the card back to queued. A live run picks it up at once;
otherwise \`service run\` resumes the run.

Options:
  --all   every FAILED or CANCELLED task of the latest run (those of earlier runs stay as
          they are; name one to retry it)`,
  async run(args, ctx) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { all: { type: "boolean", default: false } },
    });
    if (values.all === (positionals.length > 0)) {
      throw new CliError("name the tasks to retry (`service retry <task>...`) or pass --all");
    }
    return await changeTasks(ctx, { kind: "retry", ids: positionals, all: values.all! });
  },
};
