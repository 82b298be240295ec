/** `mcp catalog install ID | uninstall ID | upgrade [ID | --all]`. */
import { CliError, colour } from "../../command.ts";
import type { CatalogEntry } from "../../../catalog/schema.ts";
import {
  displayArgv,
  entryEnvNames,
  type InstallConsent,
  pendingUpgrades,
  type UpgradeChange,
} from "../../../catalog/entry_plan.ts";
import { installPreview } from "../../../catalog/preview.ts";
import { installEntry, uninstallEntry } from "../../../catalog/install.ts";
import { type InstallPlace, installPlace } from "../../../catalog/install_place.ts";
import {
  type InstalledRecord,
  managedBlock,
  readConfigText,
} from "../../../catalog/managed_config.ts";
import type { HealthOutcome } from "../../../catalog/health.ts";
import type { SignatureStatus } from "../../../catalog/signature.ts";
import { printable } from "../../../util/printable.ts";
import { allowEnvFlags, envConsentPlan, unreadFlags } from "../../../catalog/env_consent.ts";
import { ask, type CatalogCli, confirm, entryById, signatures, theCatalog } from "./_context.ts";

/** One line about a health outcome. */
function healthLine(id: string, h: HealthOutcome): string {
  if (!h.ok) return colour.red(`${id}: health check FAILED: ${printable(h.error ?? "")}`);
  const who = h.server ? printable(`${h.server.name} ${h.server.version}`) : "server";
  const tools = h.tools === undefined ? "" : `, ${h.tools} tool${h.tools === 1 ? "" : "s"}`;
  return colour.green(
    `${id}: health check ok: ${who} answered initialize (protocol ${
      printable(h.protocol_version ?? "?")
    }${tools}) in ${h.duration_ms} ms`,
  );
}

const places = new WeakMap<CatalogCli, Map<string, Promise<InstallPlace>>>();

/** Where `entry`'s install command runs (probed once per program and command). */
function placeOf(cli: CatalogCli, entry: CatalogEntry): Promise<InstallPlace> {
  const mine = places.get(cli) ?? new Map<string, Promise<InstallPlace>>();
  places.set(cli, mine);
  const binary = entry.install_command[0];
  let place = mine.get(binary);
  if (!place) {
    place = installPlace(cli.config, binary, cli.env);
    mine.set(binary, place);
  }
  return place;
}

/** Run one install with progress; false (with the reason printed) when it failed. */
async function runInstall(
  cli: CatalogCli,
  entry: CatalogEntry,
  consent: InstallConsent,
): Promise<boolean> {
  const { ctx } = cli;
  const place = await placeOf(cli, entry);
  const out = cli.flags.json ? ctx.stderr : ctx.stdout; // --json keeps stdout for the JSON
  ctx.stderr(
    `installing ${entry.id} ${printable(entry.version_pin)}: ${
      displayArgv(entry.install_command)
    } ${place.words}`,
  );
  const result = await installEntry(entry, {
    ...cli.install,
    place,
    consent,
    onLine: (line) => ctx.stderr(colour.dim(`  │ ${printable(line)}`)),
  });
  const secs = (result.run.durationMs / 1000).toFixed(1);
  if (!result.written) {
    const why = result.run.timedOut
      ? "timed out (SERVICE_MCP_INSTALL_TIMEOUT_S raises the limit)"
      : result.run.interrupted
      ? "was interrupted"
      : result.run.code === 127
      ? `exited 127: ${printable(entry.install_command[0])} is not on PATH`
      : `exited ${result.run.code}`;
    ctx.stderr(colour.red(
      `install of ${entry.id} failed: the install command ${why} after ${secs} s; ` +
        `${cli.install.configPath} was not changed`,
    ));
    return false;
  }
  out(
    `installed ${entry.id} ${
      printable(entry.version_pin)
    } into ${cli.install.configPath} (install command took ${secs} s)`,
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

async function printPreview(
  cli: CatalogCli,
  entry: CatalogEntry,
  opts: {
    signature: SignatureStatus;
    installed?: InstalledRecord;
    autoUpgrade: boolean;
    changes?: UpgradeChange[];
  },
) {
  const place = await placeOf(cli, entry);
  const lines = installPreview(entry, {
    ...opts,
    configPath: cli.install.configPath,
    place: { words: place.words, host: place.kind === "host" },
  });
  const out = cli.flags.json ? cli.ctx.stderr : cli.ctx.stdout;
  for (const l of lines) out(l.warn ? colour.bold(colour.red(l.text)) : l.text);
}

/**
 * Which variables the entry's server may read (lib/catalog/env_consent.ts): those allowed before
 * (`already`) that it still references, those named with `--allow-env`, and — asked, unless
 * `--yes` — the other ones it newly references. `--yes` never grants a variable.
 */
async function envConsent(
  cli: CatalogCli,
  entry: CatalogEntry,
  already: readonly string[],
): Promise<string[]> {
  const plan = envConsentPlan({
    referenced: entryEnvNames(entry),
    already,
    allowFlags: cli.flags.allowEnv,
    yes: cli.flags.yes,
  });
  let declined = plan.notGranted;
  if (plan.ask.length > 0) {
    const question = `let ${entry.id} read ${
      plan.ask.join(", ")
    } from your environment (their values go to its server)?`;
    if (await ask(question)) return [...plan.granted, ...plan.ask].sort();
    declined = plan.ask;
  }
  if (declined.length > 0) {
    cli.ctx.stderr(
      `not allowed: ${declined.join(", ")}: the server gets ${
        declined.map((n) => `\${${n}}`).join(", ")
      } as written${
        cli.flags.yes ? " (--yes accepts the install, never a variable)" : ""
      }; to allow, install again with ${allowEnvFlags(declined)}`,
    );
  }
  return plan.granted;
}

/**
 * Refuse `--allow-env` names that none of `entries` (what is being installed or upgraded after
 * asking) reads: a typo must not pass for consent. Nothing has been changed yet.
 */
function checkAllowFlags(
  cli: CatalogCli,
  entries: readonly CatalogEntry[],
  doing: "install" | "upgrade",
): void {
  const reads = [...new Set(entries.flatMap(entryEnvNames))].sort();
  const unread = unreadFlags(cli.flags.allowEnv, reads);
  if (unread.length === 0) return;
  const who = doing === "install"
    ? `${entries[0].id} reads no such variable (it reads ${reads.join(", ") || "none"})`
    : entries.length === 0
    ? "no upgrade to ask for reads it"
    : `no upgrade asked for reads it (they read ${reads.join(", ") || "none"})`;
  throw new CliError(
    `--allow-env ${unread.join(", ")}: ${who}; nothing was ${
      doing === "install" ? "installed" : "upgraded"
    }`,
  );
}

async function currentBlock(cli: CatalogCli) {
  return managedBlock(await readConfigText(cli.install.configPath), cli.install.configPath);
}

/** `install ID`: preview, confirmation, sandboxed install, managed-block write, health check. */
export async function install(cli: CatalogCli): Promise<number> {
  const loaded = await theCatalog(cli);
  const entry = entryById(loaded, cli.args[0]);
  checkAllowFlags(cli, [entry], "install");
  const signature = (await signatures(cli, loaded)).get(entry.id) ?? "missing";
  const autoUpgrade = cli.flags.autoUpgrade;
  await printPreview(cli, entry, {
    signature,
    installed: (await currentBlock(cli)).installed[entry.id],
    autoUpgrade,
  });
  if (!(await confirm(cli, `install ${entry.id}?`))) {
    cli.ctx.stderr("not installed: declined (pass --yes to accept without asking)");
    return 1;
  }
  const allowedEnv = await envConsent(cli, entry, []);
  return (await runInstall(cli, entry, { autoUpgrade, allowedEnv })) ? 0 : 1;
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
 * change. An upgrade the user's record lets through without asking (entry_plan.ts's
 * `upgradeVerdict`: auto-upgrade allowed at install, still offered by the catalog, only the pin
 * changes) is applied; the named one (or every other with --all) is previewed and asked for, one
 * by one.
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
  const auto = upgrades.filter((u) => u.verdict.auto);
  const asked = upgrades.filter((u) => !u.verdict.auto && (id ? u.id === id : flags.all));
  const outcome = new Map<string, "applied" | "failed" | "declined">();
  for (const u of upgrades) {
    const how = u.verdict.auto
      ? " (auto-upgrade: applying)"
      : asked.includes(u)
      ? ` (asks: ${u.verdict.reason})`
      : ` (asks: ${u.verdict.reason}; \`service mcp catalog upgrade ${u.id}\` or \`--all\`)`;
    say(`${u.id}: ${printable(u.from)} → ${printable(u.to)}${how}`);
  }
  if (upgrades.length === 0 || (id && !upgrades.some((u) => u.id === id))) {
    say(
      id
        ? `${id} is up to date (${printable(block.installed[id].version_pin)})`
        : "everything installed is up to date",
    );
  }
  const consentOf = (r: InstalledRecord): InstallConsent => ({
    autoUpgrade: r.auto_upgrade,
    allowedEnv: r.allowed_env ?? [],
  });
  checkAllowFlags(cli, asked.map((u) => u.entry), "upgrade");
  for (const u of auto) {
    outcome.set(u.id, (await runInstall(cli, u.entry, consentOf(u.record))) ? "applied" : "failed");
  }
  const sigs = asked.length > 0 ? await signatures(cli, loaded) : new Map();
  for (const u of asked) {
    await printPreview(cli, u.entry, {
      signature: sigs.get(u.id) ?? "missing",
      installed: u.record,
      autoUpgrade: u.record.auto_upgrade,
      changes: u.changes,
    });
    if (!(await confirm(cli, `upgrade ${u.id} to ${printable(u.to)}?`))) {
      outcome.set(u.id, "declined");
      ctx.stderr(`${u.id} not upgraded: declined (pass --yes to accept without asking)`);
      continue;
    }
    const allowedEnv = await envConsent(cli, u.entry, u.record.allowed_env ?? []);
    const ok = await runInstall(cli, u.entry, { ...consentOf(u.record), allowedEnv });
    outcome.set(u.id, ok ? "applied" : "failed");
  }
  if (flags.json) {
    ctx.stdout(JSON.stringify(
      {
        upgrades: upgrades.map((u) => ({
          id: u.id,
          from: u.from,
          to: u.to,
          auto_upgrade: u.verdict.auto,
          asks: u.verdict.auto ? null : u.verdict.reason,
          changes: u.changes.map((c) => c.field),
          applied: outcome.get(u.id) === "applied",
          failed: outcome.get(u.id) === "failed",
          declined: outcome.get(u.id) === "declined",
        })),
        missing,
      },
      null,
      2,
    ));
  }
  return [...outcome.values()].some((o) => o !== "applied") ? 1 : 0;
}
