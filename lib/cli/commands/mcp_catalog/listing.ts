/** `mcp catalog browse | search QUERY | info ID | list-installed`. */
import { colour } from "../../command.ts";
import type { CatalogEntry } from "../../../catalog/schema.ts";
import { installPreview } from "../../../catalog/preview.ts";
import { printable } from "../../../util/printable.ts";
import { managedBlock, readConfigText } from "../../../catalog/managed_config.ts";
import { readHealth } from "../../../catalog/health.ts";
import type { LoadedCatalog } from "../../../catalog/fetch.ts";
import { type CatalogCli, entryById, signatures, theCatalog } from "./_context.ts";
import { table } from "./_table.ts";

async function installedBlock(cli: CatalogCli) {
  return managedBlock(await readConfigText(cli.install.configPath), cli.install.configPath);
}

function sourceLine(loaded: LoadedCatalog, count: number): string {
  const how =
    { cache: "cached", downloaded: "downloaded", revalidated: "revalidated", file: "read" }[
      loaded.how
    ];
  return colour.dim(
    `${count} entr${
      count === 1 ? "y" : "ies"
    } · ${loaded.servedBy} · ${how}, fetched ${loaded.fetchedAt}`,
  );
}

async function printEntries(cli: CatalogCli, loaded: LoadedCatalog, entries: CatalogEntry[]) {
  const block = await installedBlock(cli);
  if (cli.flags.json) {
    cli.ctx.stdout(JSON.stringify(
      {
        source: loaded.servedBy,
        fetched_at: loaded.fetchedAt,
        how: loaded.how,
        warnings: loaded.warnings,
        entries: entries.map((e) => ({
          ...e,
          installed: block.installed[e.id]?.version_pin ?? null,
        })),
      },
      null,
      2,
    ));
    return 0;
  }
  if (entries.length === 0) {
    cli.ctx.stdout("no entries");
  } else {
    const rows = [["ID", "VERSION", "TRANSPORTS", "VERIFIED", "INSTALLED", "NAME"]];
    for (const e of entries) {
      const pin = block.installed[e.id]?.version_pin;
      rows.push([
        e.id,
        printable(e.version_pin),
        e.transports.join(","),
        e.verified_by_service ? "yes" : "NO",
        pin === undefined ? "-" : pin === e.version_pin ? "yes" : `${printable(pin)} (upgrade)`,
        printable(e.name),
      ]);
    }
    for (const line of table(rows)) cli.ctx.stdout(line);
  }
  cli.ctx.stdout(sourceLine(loaded, entries.length));
  return 0;
}

/** `browse`: every entry. */
export async function browse(cli: CatalogCli): Promise<number> {
  const loaded = await theCatalog(cli);
  return await printEntries(cli, loaded, loaded.catalog.entries);
}

/** `search QUERY`: entries whose id, name or description contain every word. */
export async function search(cli: CatalogCli): Promise<number> {
  const words = cli.args.join(" ").toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) {
    cli.ctx.stderr("service mcp catalog search: give a word to look for, e.g. `search memory`");
    return 1;
  }
  const loaded = await theCatalog(cli);
  const hits = loaded.catalog.entries.filter((e) => {
    const text = `${e.id} ${e.name} ${e.description}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  return await printEntries(cli, loaded, hits);
}

/** `info ID`: every field of one entry, what installing it would do, its install state. */
export async function info(cli: CatalogCli): Promise<number> {
  const loaded = await theCatalog(cli);
  const entry = entryById(loaded, cli.args[0]);
  const signature = (await signatures(cli, loaded)).get(entry.id) ?? "missing";
  const block = await installedBlock(cli);
  const health = (await readHealth(cli.install.stateDir))[entry.id];
  if (cli.flags.json) {
    cli.ctx.stdout(JSON.stringify(
      { entry, signature, installed: block.installed[entry.id] ?? null, health: health ?? null },
      null,
      2,
    ));
    return 0;
  }
  let lines;
  try {
    lines = installPreview(entry, {
      signature,
      installed: block.installed[entry.id],
      autoUpgrade: block.installed[entry.id]?.auto_upgrade ?? false,
      configPath: cli.install.configPath,
    });
  } catch (e) {
    cli.ctx.stdout(`${printable(entry.name)} (${entry.id}): ${printable(entry.description)}`);
    cli.ctx.stdout(colour.yellow((e as Error).message));
    return 0;
  }
  for (const l of lines) cli.ctx.stdout(l.warn ? colour.yellow(l.text) : l.text);
  if (health) {
    cli.ctx.stdout(
      `  last health check: ${
        health.ok ? colour.green("ok") : colour.red(`failed: ${printable(health.error ?? "")}`)
      } (${health.checked_at})`,
    );
  }
  return 0;
}

/** `list-installed`: the managed block of the MCP configuration, with the last health checks. */
export async function listInstalled(cli: CatalogCli): Promise<number> {
  const block = await installedBlock(cli);
  const health = await readHealth(cli.install.stateDir);
  const ids = [...new Set([...Object.keys(block.installed), ...Object.keys(block.mcpServers)])]
    .sort();
  if (cli.flags.json) {
    cli.ctx.stdout(JSON.stringify(
      {
        config: cli.install.configPath,
        installed: ids.map((id) => ({
          id,
          ...(block.installed[id] ?? {}),
          server: block.mcpServers[id] ?? null,
          health: health[id] ?? null,
        })),
      },
      null,
      2,
    ));
    return 0;
  }
  if (ids.length === 0) {
    cli.ctx.stdout(
      `nothing installed (${cli.install.configPath}); \`service mcp catalog install ID\` installs one`,
    );
    return 0;
  }
  const rows = [["ID", "VERSION", "VERIFIED", "AUTO-UPGRADE", "INSTALLED AT", "HEALTH", "COMMAND"]];
  for (const id of ids) {
    const r = block.installed[id];
    const s = block.mcpServers[id];
    const h = health[id];
    rows.push([
      id,
      printable(r?.version_pin ?? "?"),
      r ? (r.verified_by_service ? "yes" : "NO") : "?",
      r ? (r.auto_upgrade ? "yes" : "no") : "?",
      r?.installed_at ?? "?",
      h ? (h.ok ? "ok" : "FAILED") : "not checked",
      s ? printable([s.command, ...s.args].join(" ")) : "(missing)",
    ]);
  }
  for (const line of table(rows)) cli.ctx.stdout(line);
  cli.ctx.stdout(colour.dim(cli.install.configPath));
  return 0;
}
