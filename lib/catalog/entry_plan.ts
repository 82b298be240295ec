/**
 * What installing or upgrading catalog entries would do, as data (pure): the server written into
 * the managed block, the install record holding the user's consent, and the pending upgrades with
 * what each changes and whether it may be applied without asking.
 *
 * Consent comes from the user's installed record, never from the catalog: an upgrade is applied
 * without asking only when the user allowed auto-upgrade at install (`install --auto-upgrade`),
 * the catalog still marks the entry `auto_upgrade: true`, and nothing but the version pin changes
 * (the install command, the server's command, args and env, and verification stay as they were).
 */
import type { Catalog, CatalogEntry } from "./schema.ts";
import type { InstalledRecord, ManagedBlock, ManagedServer } from "./managed_config.ts";
import { referencedNames } from "../config/resolve_vars.ts";
import { printable } from "../util/printable.ts";

/** An entry the service cannot write a server for. */
class NotInstallableError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "catalog_not_installable";
  constructor(message: string) {
    super(message);
    this.name = "NotInstallableError";
  }
}

/** The server an entry writes into the managed block. */
export function managedServer(entry: CatalogEntry): ManagedServer {
  if (!entry.command) {
    throw new NotInstallableError(
      `catalog entry ${entry.id} has no "command": the catalog does not say how to start the ` +
        "server, so there is nothing to write into your MCP configuration; ask the catalog " +
        `maintainers (${printable(entry.repository)}) to add one`,
    );
  }
  return { command: entry.command, args: entry.args ?? [], env: entry.env ?? {} };
}

/** The variables the entry's server would read from the user's environment (`${NAME}`). */
export function entryEnvNames(entry: CatalogEntry): string[] {
  return referencedNames([entry.command ?? "", entry.args ?? [], entry.env ?? {}]);
}

/** What the user agreed to when installing. */
export interface InstallConsent {
  /** Pin-only upgrades may be applied without asking. */
  autoUpgrade: boolean;
  /** Variables the server may read; names it does not reference are dropped. */
  allowedEnv: readonly string[];
}

/** The install record of an entry: what ran, and the user's consent. */
export function installedRecord(
  entry: CatalogEntry,
  now: Date,
  consent: InstallConsent,
): InstalledRecord {
  const referenced = new Set(entryEnvNames(entry));
  return {
    version_pin: entry.version_pin,
    installed_at: now.toISOString(),
    verified_by_service: entry.verified_by_service,
    auto_upgrade: consent.autoUpgrade,
    install_command: [...entry.install_command],
    allowed_env: [...new Set(consent.allowedEnv)].filter((n) => referenced.has(n)).sort(),
  };
}

/** Shell-like quoting for display only (the argv is never given to a shell), printable. */
export function displayArgv(argv: string[]): string {
  return printable(
    argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
      .join(" "),
  );
}

/** A field an upgrade changes that decides what runs or what the server gets. */
export interface UpgradeChange {
  field: "install_command" | "command" | "args" | "env" | "verified_by_service";
  /** The installed value, as JSON (`undefined` when the record predates it). */
  from: string;
  /** The catalog's new value, as JSON. */
  to: string;
}

const json = (v: unknown) => (v === undefined ? "(not recorded at install)" : JSON.stringify(v));

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What upgrading to `entry` changes besides the pin, against the record and the written server. */
export function upgradeChanges(
  entry: CatalogEntry,
  record: InstalledRecord,
  server: ManagedServer | undefined,
): UpgradeChange[] {
  const next = { command: entry.command, args: entry.args ?? [], env: entry.env ?? {} };
  const out: UpgradeChange[] = [];
  if (!record.install_command || !sameJson(record.install_command, entry.install_command)) {
    out.push({
      field: "install_command",
      from: json(record.install_command),
      to: json(entry.install_command),
    });
  }
  for (const field of ["command", "args", "env"] as const) {
    if (!server || !sameJson(server[field], next[field])) {
      out.push({ field, from: json(server?.[field]), to: json(next[field]) });
    }
  }
  if (record.verified_by_service && !entry.verified_by_service) {
    out.push({ field: "verified_by_service", from: "true", to: "false" });
  }
  return out;
}

/** Whether an upgrade may be applied without asking, and if not, why (one policy). */
export type UpgradeVerdict = { auto: true } | { auto: false; reason: string };

/** Decide whether an upgrade runs without asking: the user's consent, the catalog's, no change. */
export function upgradeVerdict(
  entry: CatalogEntry,
  record: InstalledRecord,
  changes: readonly UpgradeChange[],
): UpgradeVerdict {
  if (!record.auto_upgrade) {
    return { auto: false, reason: "auto-upgrade was not allowed at install" };
  }
  if (!entry.auto_upgrade) {
    return { auto: false, reason: "the catalog no longer marks it auto_upgrade" };
  }
  if (changes.length > 0) {
    return { auto: false, reason: `it changes ${changes.map((c) => c.field).join(", ")}` };
  }
  return { auto: true };
}

/** One installed entry whose pin differs from the catalog's. */
export interface PendingUpgrade {
  id: string;
  from: string;
  to: string;
  /** What it changes besides the pin. */
  changes: UpgradeChange[];
  verdict: UpgradeVerdict;
  entry: CatalogEntry;
  record: InstalledRecord;
}

/** Installed entries against the catalog: pending upgrades and ids the catalog no longer lists. */
export function pendingUpgrades(
  catalog: Catalog,
  block: ManagedBlock,
): { upgrades: PendingUpgrade[]; missing: string[] } {
  const byId = new Map(catalog.entries.map((e) => [e.id, e]));
  const upgrades: PendingUpgrade[] = [];
  const missing: string[] = [];
  for (
    const [id, record] of Object.entries(block.installed).sort(([a], [b]) => a.localeCompare(b))
  ) {
    const entry = byId.get(id);
    if (!entry) missing.push(id);
    else if (entry.version_pin !== record.version_pin) {
      const changes = upgradeChanges(entry, record, block.mcpServers[id]);
      upgrades.push({
        id,
        from: record.version_pin,
        to: entry.version_pin,
        changes,
        verdict: upgradeVerdict(entry, record, changes),
        entry,
        record,
      });
    }
  }
  return { upgrades, missing };
}
