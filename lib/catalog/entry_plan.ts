/**
 * What installing or upgrading catalog entries would do, as data (pure): the server written into
 * the managed block, the install record, the preview shown before asking, and pending upgrades.
 */
import type { Catalog, CatalogEntry } from "./schema.ts";
import type { InstalledRecord, ManagedBlock, ManagedServer } from "./managed_config.ts";
import type { SignatureStatus } from "./signature.ts";

/** An entry the service cannot write a server for. */
export class NotInstallableError extends Error {
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
        `maintainers (${entry.repository}) to add one`,
    );
  }
  return { command: entry.command, args: entry.args ?? [], env: entry.env ?? {} };
}

/** The install record of an entry. */
export function installedRecord(entry: CatalogEntry, now: Date): InstalledRecord {
  return {
    version_pin: entry.version_pin,
    installed_at: now.toISOString(),
    verified_by_service: entry.verified_by_service,
    auto_upgrade: entry.auto_upgrade,
  };
}

/** Shell-like quoting for display only (the argv is never given to a shell). */
export function displayArgv(argv: string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}

/** One line of a preview; `warn` lines are shown prominently. */
export interface PreviewLine {
  text: string;
  warn?: boolean;
}

const SIGNATURE_WORDS: Record<SignatureStatus, PreviewLine> = {
  valid: { text: "valid (Ed25519, configured key)" },
  invalid: {
    text: "INVALID: the entry does not match its signature under the configured key",
    warn: true,
  },
  missing: { text: "none (the entry is not signed)" },
  unchecked: { text: "present, not checked (no mcp_catalog.public_key configured)" },
};

/** The install preview (spec §2.2; issue 13): every field, the exact argv, the warnings. */
export function installPreview(
  entry: CatalogEntry,
  opts: { signature: SignatureStatus; installed?: InstalledRecord; configPath: string },
): PreviewLine[] {
  const server = managedServer(entry);
  const lines: PreviewLine[] = [];
  if (!entry.verified_by_service) {
    lines.push({
      text:
        "WARNING: this entry is NOT verified by the service team (verified_by_service: false). " +
        "Its install command runs on this machine: read it before you accept.",
      warn: true,
    });
  }
  lines.push(
    { text: `${entry.name} (${entry.id})` },
    { text: `  ${entry.description}` },
    { text: `  homepage:     ${entry.homepage}` },
    { text: `  repository:   ${entry.repository}` },
    { text: `  version pin:  ${entry.version_pin}` },
    { text: `  transports:   ${entry.transports.join(", ")}` },
    {
      text: `  verified:     ${entry.verified_by_service ? "yes" : "NO"}`,
      warn: !entry.verified_by_service,
    },
    { text: `  auto-upgrade: ${entry.auto_upgrade ? "yes" : "no"}` },
    {
      text: `  signature:    ${SIGNATURE_WORDS[opts.signature].text}`,
      warn: SIGNATURE_WORDS[opts.signature].warn,
    },
    { text: "  will run (argv, no shell, in an empty temporary directory):" },
    { text: `    ${displayArgv(entry.install_command)}` },
    { text: `    ${JSON.stringify(entry.install_command)}` },
    { text: `  will write into "service-managed" of ${opts.configPath}:` },
    { text: `    command: ${server.command}` },
    { text: `    args:    ${JSON.stringify(server.args)}` },
    {
      text: `    env:     ${
        Object.keys(server.env).length === 0
          ? "{}"
          : Object.keys(server.env).map((k) => `${k}=${server.env[k]}`).join(" ")
      }`,
    },
  );
  if (opts.installed) {
    lines.push({
      text:
        `  already installed at ${opts.installed.version_pin} (${opts.installed.installed_at}): ` +
        "installing replaces it",
    });
  }
  return lines;
}

/** One installed entry whose pin differs from the catalog's. */
export interface PendingUpgrade {
  id: string;
  from: string;
  to: string;
  /** The catalog entry says `auto_upgrade: true`. */
  auto: boolean;
  entry: CatalogEntry;
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
      upgrades.push({
        id,
        from: record.version_pin,
        to: entry.version_pin,
        auto: entry.auto_upgrade,
        entry,
      });
    }
  }
  return { upgrades, missing };
}
