/** `service serve`: the task server and review board on 127.0.0.1:8052. */
import { parseArgs } from "node:util";
import { type CliContext, CliError, type Command } from "../command.ts";
import { loadWorkspaceConfig } from "../../config/load.ts";
import { type ServedApp, startServer, UnsafeBindError } from "../../server/serve.ts";
import { TokenVariableUnsetError } from "../../auth/tokens.ts";
import { printableItem } from "../../util/printable.ts";

/** `service serve`: serve the task API and the review board. */
export const serveCommand: Command = {
  name: "serve",
  summary: "serve the task API and the review board",
  help: `Usage: service serve [--port N] [--host H] [--root DIR]

Serves the review board (/dashboard/review-board), its JSON API (/review-board/...), /status
and the task API over the workspace's .sdd/ state. Stops on Ctrl-C.

Options:
  --port N     port to listen on (default: service.yaml "port", SERVICE_PORT, else 8052; 0 = any free port)
  --host H     address to bind (default 127.0.0.1; a non-loopback bind needs a bearer token)
  --root DIR   workspace root (default: the repository the current directory is in)`,
  run(args, ctx) {
    return serveUntilStopped(args, ctx, ctx.apps.server);
  },
};

/** Parse `--port`/`--host`, serve `app` over the workspace until SIGINT or SIGTERM. */
export async function serveUntilStopped(
  args: string[],
  ctx: CliContext,
  app: ServedApp,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" } },
  });
  // ValidationError on startup when service.yaml is bad (spec §7.3).
  const { server: settings } = await loadWorkspaceConfig(ctx.root);
  const port = values.port === undefined ? settings.port : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port ${values.port} is not a port number (0-65535)`);
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  try {
    const server = await startServer({
      warmUpBoard: true,
      root: ctx.root,
      host: values.host ?? settings.host,
      port,
      tokens: settings.tokens,
      server: settings.server,
      signal: controller.signal,
      warn: (line) => printableItem(`service: ${line}`).forEach((l) => ctx.stderr(l)),
      app,
    });
    await server.finished;
  } catch (e) {
    if (e instanceof UnsafeBindError || e instanceof TokenVariableUnsetError) {
      throw new CliError(e.message);
    }
    if (e instanceof Deno.errors.AddrInUse) {
      throw new CliError(
        `port ${port} is already in use: stop the other server or pass --port (or SERVICE_PORT)`,
      );
    }
    throw e;
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
  }
  return 0;
}
