/** `service gui serve`: the review board page and its JSON API only (no task API). */
import type { Command } from "../command.ts";
import { serveUntilStopped } from "./serve.ts";

/** `service gui serve`: only the review board page, its JSON API and /events (no task API). */
export const guiServeCommand: Command = {
  name: "gui serve",
  summary: "serve only the review board page, its JSON API and /events (no task API)",
  help: `Usage: service gui serve [--port N] [--host H] [--root DIR]

Serves the review board page (/dashboard/review-board), the review-board JSON API
(/review-board/..., review actions under /dashboard/review-board/runs/...), /status and the
/events activity stream over the workspace's .sdd/ state, without the task API: for looking at
a finished or copied run. Open http://HOST:PORT/dashboard/review-board. Stops on Ctrl-C.

Options:
  --port N     port to listen on (default: service.yaml "port", SERVICE_PORT, else 8052; 0 = any free port)
  --host H     address to bind (default 127.0.0.1; a non-loopback bind needs a bearer token)
  --root DIR   workspace root (default: the repository the current directory is in)`,
  run(args, ctx) {
    return serveUntilStopped(args, ctx, ctx.apps.gui);
  },
};
