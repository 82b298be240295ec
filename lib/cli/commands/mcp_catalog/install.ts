/** `mcp catalog install ID | uninstall ID | upgrade [ID | --all]`. */
import { CliError, colour } from "../../command.ts";
import type { CatalogEntry } from "../../../catalog/schema.ts";
import { displayArgv, installPreview, pendingUpgrades } from "../../../catalog/entry_plan.ts";
import { installEntry, uninstallEntry } from "../../../catalog/install.ts";
import { managedBlock, readConfigText } from "../../../catalog/managed_config.ts";
import type { HealthOutcome } from "../../../mcp/health.ts";
import type { SignatureStatus } from "../../../catalog/signature.ts";
import { type CatalogCli, confirm, entryById, signatures, theCatalog } from "./_context.ts";

/** One line about a health outcome. */
function healthLine(id: string, h: HealthOutcome): string {
  if (!h.ok) return colour.red(`${id}: health check FAILED: ${h.error}`);
  const who = h.server ? `${h.server.name} ${h.server.version}` : "server";
  const tools = h.tools === undefined ? "" : `, ${h.tools} tool${h.tools === 1 ? "" : "s"}`;
  return colour.green(
    `${id}: health check ok: ${who} answered initialize (protocol ${
      h.protocol_version ?? "?"
    }${tools}) in ${h.duration_ms} ms`,
  );
}

/** Run one install with progress; false (with the reason printed) when it failed. */
async function runInstall(cli: CatalogCli, entry: CatalogEntry): Promise<boolean> {
  const { ctx } = cli;
  const out = cli.flags.json ? ctx.stderr : ctx.stdout; // --json keeps stdout for the JSON
  ctx.stderr(`installing ${entry.id} ${entry.version_pin}: ${displayArgv(entry.install_command)}`);
  const result = await installEntry(entry, {
    ...cli.install,
    onLine: (line) => ctx.stderr(colour.dim(`  │ ${line}`)),
  });
  const secs = (result.run.durationMs / 1000).toFixed(1);
  if (!result.written) {
    const why = result.run.timedOut
      ? "timed out (SERVICE_MCP_INSTALL_TIMEOUT_S raises the limit)"
      : result.run.interrupted
      ? "was interrupted"
      : result.run.code === 127
      ? `exited 127: ${entry.install_command[0]} is not on PATH`
      : `exited ${result.run.code}`;
    ctx.stderr(colour.red(
      `install of ${entry.id} failed: the install command ${why} after ${secs} s; ` +
        `${cli.install.configPath} was not changed`,
    ));
    return false;
  }
  out(
    `installed ${entry.id} ${entry.version_pin} into ${cli.install.configPath} (install command took ${secs} s)`,
  );
  if (result.health) {
    out(healthLine(entry.id, result.health));
    if (!result.health.ok) {
      out(
        "the entry stays installed; `service mcp catalog status` checks again, " +
          `\`service mcp catalog uninstall ${entry.id}\` removes it`,
      );
      return false;
    }
  } else {
    out(
      `${entry.id}: no health check (transports: ${
        entry.transports.join(", ")
      }; only stdio servers are started)`,
    );
  }
  return true;
}

function printPreview(
  cli: CatalogCli,
  entry: CatalogEntry,
  signature: SignatureStatus,
  installed?: ReturnType<typeof managedBlock>["installed"][string],
) {
  const lines = installPreview(entry, { signature, installed, configPath: cli.install.configPath });
  const out = cli.flags.json ? cli.ctx.stderr : cli.ctx.stdout;
  for (const l of lines) out(l.warn ? colour.bold(colour.red(l.text)) : l.text);
}

async function currentBlock(cli: CatalogCli) {
  return managedBlock(await readConfigText(cli.install.configPath), cli.install.configPath);
}

/** `install ID`: preview, confirmation, sandboxed install, managed-block write, health check. */
export async function install(cli: CatalogCli): Promise<number> {
  const loaded = await theCatalog(cli);
  const entry = entryById(loaded, cli.args[0]);
  const signature = (await signatures(cli, loaded)).get(entry.id) ?? "missing";
  printPreview(cli, entry, signature, (await currentBlock(cli)).installed[entry.id]);
  if (!(await confirm(cli, `install ${entry.id}?`))) {
    cli.ctx.stderr("not installed: declined (pass --yes to accept without asking)");
    return 1;
  }
  return (await runInstall(cli, entry)) ? 0 : 1;
}

/** `uninstall ID`: removes only the managed entry. */
export async function uninstall(cli: CatalogCli): Promise<number> {
  const id = cli.args[0];
  if (!id) throw new CliError("name the entry: `service mcp catalog uninstall ID`");
  const block = await currentBlock(cli);
  if (!(id in block.installed) && !(id in block.mcpServers)) {
    throw new CliError(
      `${id} is not installed in ${cli.install.configPath}; \`service mcp catalog list-installed\` lists what is`,
    );
  }
  if (
    !(await confirm(
      cli,
      `remove ${id} from the service-managed block of ${cli.install.configPath}?`,
    ))
  ) {
    cli.ctx.stderr("not uninstalled: declined (pass --yes to accept without asking)");
    return 1;
  }
  await uninstallEntry(id, cli.install);
  cli.ctx.stdout(
    `uninstalled ${id}: removed from the service-managed block of ${cli.install.configPath}`,
  );
  return 0;
}

/**
 * `upgrade [ID | --all]`: compares the installed pins with the catalog and shows what would
 * change; entries with `auto_upgrade: true` are applied without asking, the named ones (or all
 * with --all) after confirmation.
 */
export async function upgrade(cli: CatalogCli): Promise<number> {
  const { ctx, flags } = cli;
  const say = (line: string) => {
    if (!flags.json) ctx.stdout(line);
  };
  const loaded = await theCatalog(cli);
  const block = await currentBlock(cli);
  const { upgrades, missing } = pendingUpgrades(loaded.catalog, block);
  const id = cli.args[0];
  if (id && !(id in block.installed)) {
    throw new CliError(`${id} is not installed; \`service mcp catalog install ${id}\` installs it`);
  }
  for (const m of missing) {
    ctx.stderr(
      colour.yellow(`warning: ${m} is installed but no longer in the catalog; left as it is`),
    );
  }
  const chosen = upgrades.filter((u) => (id ? u.id === id : flags.all));
  const auto = upgrades.filter((u) => u.auto && !chosen.includes(u));
  const outcome = new Map<string, boolean>();
  for (const u of upgrades) {
    const how = chosen.includes(u)
      ? ""
      : u.auto
      ? " (auto_upgrade: applying)"
      : ` (\`service mcp catalog upgrade ${u.id}\` or \`--all\` applies it)`;
    say(`${u.id}: ${u.from} → ${u.to}${how}`);
  }
  if (upgrades.length === 0 || (id && chosen.length === 0)) {
    say(
      id
        ? `${id} is up to date (${block.installed[id].version_pin})`
        : "everything installed is up to date",
    );
  }
  for (const u of auto) outcome.set(u.id, await runInstall(cli, u.entry));
  let declined = false;
  if (chosen.length > 0) {
    const sigs = await signatures(cli, loaded);
    for (const u of chosen) {
      printPreview(cli, u.entry, sigs.get(u.id) ?? "missing", block.installed[u.id]);
    }
    const what = chosen.length === 1
      ? `${chosen[0].id} to ${chosen[0].to}`
      : `${chosen.length} entries`;
    if (await confirm(cli, `upgrade ${what}?`)) {
      for (const u of chosen) outcome.set(u.id, await runInstall(cli, u.entry));
    } else {
      declined = true;
      ctx.stderr("not upgraded: declined (pass --yes to accept without asking)");
    }
  }
  if (flags.json) {
    ctx.stdout(JSON.stringify(
      {
        upgrades: upgrades.map((u) => ({
          id: u.id,
          from: u.from,
          to: u.to,
          auto_upgrade: u.auto,
          applied: outcome.get(u.id) === true,
          failed: outcome.get(u.id) === false,
        })),
        missing,
      },
      null,
      2,
    ));
  }
  return declined || [...outcome.values()].some((ok) => !ok) ? 1 : 0;
}
