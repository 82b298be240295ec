/** `mcp catalog status`: re-run the health check of every installed server. */
import { colour } from "../../command.ts";
import { managedBlock, readConfigText } from "../../../catalog/managed_config.ts";
import { checkInstalledServer } from "../../../catalog/install.ts";
import type { HealthOutcome } from "../../../catalog/health.ts";
import type { CatalogCli } from "./_context.ts";
import { table } from "./_table.ts";
import { printable } from "../../../util/printable.ts";

/** Check every installed server now; exit 1 when any fails. */
export async function status(cli: CatalogCli): Promise<number> {
  const block = managedBlock(await readConfigText(cli.install.configPath), cli.install.configPath);
  const ids = Object.keys(block.mcpServers).sort();
  const results: Record<string, HealthOutcome> = {};
  for (const id of ids) {
    if (!cli.flags.json) cli.ctx.stderr(colour.dim(`checking ${id}…`));
    results[id] = await checkInstalledServer(id, {
      server: block.mcpServers[id],
      allowedEnv: block.installed[id]?.allowed_env ?? [],
    }, cli.install);
  }
  const failed = ids.filter((id) => !results[id].ok);
  if (cli.flags.json) {
    cli.ctx.stdout(JSON.stringify(
      {
        config: cli.install.configPath,
        servers: ids.map((id) => ({
          id,
          version_pin: block.installed[id]?.version_pin ?? null,
          ...results[id],
        })),
      },
      null,
      2,
    ));
    return failed.length > 0 ? 1 : 0;
  }
  if (ids.length === 0) {
    cli.ctx.stdout(`nothing installed (${cli.install.configPath})`);
    return 0;
  }
  const rows = [["ID", "HEALTH", "SERVER", "PROTOCOL", "TOOLS", "TIME"]];
  for (const id of ids) {
    const h = results[id];
    rows.push([
      id,
      h.ok ? "ok" : "FAILED",
      h.server ? printable(`${h.server.name} ${h.server.version}`) : "-",
      printable(h.protocol_version ?? "-"),
      h.tools === undefined ? "-" : String(h.tools),
      `${h.duration_ms} ms`,
    ]);
  }
  for (const line of table(rows)) cli.ctx.stdout(line);
  for (const id of failed) {
    cli.ctx.stdout(colour.red(`${id}: ${printable(results[id].error ?? "")}`));
  }
  return failed.length > 0 ? 1 : 0;
}
