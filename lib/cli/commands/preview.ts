/** `service preview`: a tunnel to the local server and the webhook URLs to register through it. */
import { CliError, colour, type Command } from "../command.ts";
import { loadConfig, loadWorkspaceConfig } from "../../config/load.ts";
import { BUILTIN_TRACKERS } from "../../trackers/builtin.ts";
import { integrationRows, webhookPath } from "../../trackers/integrations.ts";
import { readTrackerRuntime } from "../../trackers/state.ts";
import { findTunnelProgram, NoTunnelProgramError, startTunnel } from "../../tunnel/tunnel.ts";
import { findWorkspaceServer } from "../../discovery/find.ts";
import { workspacePaths } from "../../workspace.ts";
import { parseOptions } from "./_options.ts";

/** `service preview`: the local server through a tunnel, and the webhook URLs to register. */
export const previewCommand: Command = {
  name: "preview",
  summary: "expose the local server through a tunnel and print the webhook URLs to register",
  help: `Usage: service preview [--port N] [--tunnel cloudflared|ngrok|bore] [--root DIR]

Starts a tunnel with whichever tunnel program is installed (cloudflared, ngrok or bore, in
that order; --tunnel picks one) to the local server — the running \`service run\`'s, else the
configured port — and prints the public webhook URL of each tracker
(<public URL>${webhookPath("<name>")}) to register with the tracker. The tunnel stops when
this command ends (Ctrl-C). Deliveries are still checked against each tracker's secret.
With no tunnel program installed it says which to install and exits 1. See docs/trackers.md.

Options:
  --port N     local port to expose
  --tunnel P   cloudflared, ngrok or bore`,
  async run(args, ctx) {
    const values = parseOptions("preview", args, {
      port: { type: "string" },
      tunnel: { type: "string" },
    });
    const wanted = values.tunnel as string | undefined;
    if (wanted && !["cloudflared", "ngrok", "bore"].includes(wanted)) {
      throw new CliError(`--tunnel ${wanted}: use cloudflared, ngrok or bore`);
    }
    const port = await localPort(ctx.root, values.port as string | undefined);
    let found;
    try {
      found = await findTunnelProgram(wanted);
    } catch (e) {
      if (e instanceof NoTunnelProgramError) throw new CliError(e.message);
      throw e;
    }
    if (!(await listening(port))) {
      ctx.stderr(colour.yellow(
        `nothing answers on 127.0.0.1:${port} yet: start \`service serve --port ${port}\` or \`service run\``,
      ));
    }
    // Listening before the tunnel starts: a Ctrl-C from now on stops the tunnel, never orphans it.
    const stopped = new Promise<"signal">((resolve) => {
      const onSignal = () => {
        Deno.removeSignalListener("SIGINT", onSignal);
        Deno.removeSignalListener("SIGTERM", onSignal);
        resolve("signal");
      };
      Deno.addSignalListener("SIGINT", onSignal);
      Deno.addSignalListener("SIGTERM", onSignal);
    });
    ctx.stderr(`starting ${found.program.name} (${found.path}) for http://127.0.0.1:${port} …`);
    const tunnel = await startTunnel(found, port).catch((e) => {
      throw new CliError((e as Error).message);
    });
    const base = tunnel.publicUrl.replace(/\/+$/, "");
    ctx.stdout(`public URL: ${base} → http://127.0.0.1:${port} (${found.program.name})`);
    const config = await loadConfig(ctx.root);
    const runtime = await readTrackerRuntime(workspacePaths(ctx.root).trackerState);
    const rows = integrationRows(config, {
      builtins: BUILTIN_TRACKERS,
      env: (n) => Deno.env.get(n),
      runtime,
    });
    const withWebhook = rows.filter((r) => r.secret_env !== null);
    ctx.stdout("register these webhook URLs with your trackers:");
    for (const r of withWebhook.length > 0 ? withWebhook : rows) {
      const note = !r.secret_env
        ? "add trackers." + r.adapter + ".webhook to service.yaml first"
        : !r.webhook_enabled
        ? "webhook disabled: set enabled: true"
        : r.secret_set
        ? `secret ${r.secret_env} set`
        : `secret ${r.secret_env} EMPTY: deliveries get 503`;
      ctx.stdout(`  ${r.adapter.padEnd(10)} ${base}${webhookPath(r.adapter)}  (${note})`);
    }
    ctx.stdout("press Ctrl-C to stop the tunnel");
    const why = await Promise.race([stopped, tunnel.exited.then(() => "exited" as const)]);
    await tunnel.stop();
    if (why === "exited") {
      ctx.stderr(colour.red(`${found.program.name} exited: the public URL no longer works`));
      return 1;
    }
    ctx.stderr("tunnel stopped");
    return 0;
  },
};

/** The port to expose: --port, the workspace's own server (a run's or `serve`'s), else the configured port. */
async function localPort(root: string, option: string | undefined): Promise<number> {
  if (option !== undefined) {
    const port = Number(option);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new CliError(`--port ${option} is not a port number (1-65535)`);
    }
    return port;
  }
  const found = (await findWorkspaceServer(root)).found;
  if (found) {
    const port = Number(new URL(found.url).port);
    if (port > 0) return port;
  }
  return (await loadWorkspaceConfig(root)).server.port;
}

async function listening(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`, {
      signal: AbortSignal.timeout(2000),
    });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
