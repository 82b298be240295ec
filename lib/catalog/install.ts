/**
 * Installing, health-checking and uninstalling catalog entries: the install command runs in the
 * sandbox and only its success writes the managed block, with the user's consent in the install
 * record; stdio servers are then started and shaken hands with, and the outcome recorded.
 */
import type { CatalogEntry } from "./schema.ts";
import { type InstallConsent, installedRecord, managedServer } from "./entry_plan.ts";
import { type ManagedServer, updateMcpConfig } from "./managed_config.ts";
import { type InstallRun, runInstallCommand } from "./sandbox.ts";
import type { InstallPlace } from "./install_place.ts";
import { checkServerHealth, type HealthOutcome, recordHealth } from "./health.ts";
import { McpVariableError, resolveAllowedVars } from "../config/resolve_vars.ts";

/** Where installs write and what they may see. */
export interface InstallContext {
  /** The user's MCP configuration file. */
  configPath: string;
  /** `$XDG_STATE_HOME/service`: health outcomes. */
  stateDir: string;
  processEnv: Record<string, string>;
  installTimeoutMs?: number;
  healthTimeoutMs?: number;
  /** Receives each line the install command prints. */
  onLine?: (line: string) => void;
  /** Where install commands run (default: host processes; lib/catalog/install_place.ts). */
  place?: InstallPlace;
  now?: () => Date;
}

/** How an install went. */
export interface InstallResult {
  run: InstallRun;
  /** The managed block was written (only after the install command succeeded). */
  written: boolean;
  /** The handshake outcome, for stdio servers. */
  health?: HealthOutcome;
}

/** An installed server and the variables its user allowed it to read. */
export interface InstalledServer {
  server: ManagedServer;
  /** `allowed_env` of the install record: only these `${NAME}` are resolved. */
  allowedEnv: readonly string[];
}

/**
 * Start an installed server and record the outcome; only the `${VAR}` its user allowed resolve
 * from the environment, the rest is passed as written.
 */
export async function checkInstalledServer(
  id: string,
  installed: InstalledServer,
  ctx: InstallContext,
): Promise<HealthOutcome> {
  let outcome: HealthOutcome;
  try {
    const resolved = resolveAllowedVars(
      installed.server,
      installed.allowedEnv,
      {
        env: (n) => ctx.processEnv[n],
        prefix: ["service-managed", "mcpServers", id],
        file: ctx.configPath,
      },
    );
    outcome = await checkServerHealth(resolved, {
      processEnv: ctx.processEnv,
      timeoutMs: ctx.healthTimeoutMs,
    });
  } catch (e) {
    if (!(e instanceof McpVariableError)) throw e;
    outcome = {
      ok: false,
      checked_at: new Date().toISOString(),
      duration_ms: 0,
      error: `${e.message}; ${e.fix}`,
    };
  }
  await recordHealth(ctx.stateDir, { [id]: outcome });
  return outcome;
}

/** Options of {@link installEntry}. */
export interface InstallEntryOptions extends InstallContext {
  /** What the user agreed to (auto-upgrade, variables), kept in the install record. */
  consent: InstallConsent;
}

/**
 * Run the entry's install command; on success write its server into the managed block and, for a
 * stdio server, check its health. A failed command leaves the configuration untouched.
 */
export async function installEntry(
  entry: CatalogEntry,
  ctx: InstallEntryOptions,
): Promise<InstallResult> {
  const server = managedServer(entry); // refuse before running anything
  const run = await runInstallCommand(entry.install_command, {
    processEnv: ctx.processEnv,
    timeoutMs: ctx.installTimeoutMs,
    onLine: ctx.onLine,
    place: ctx.place,
  });
  if (run.code !== 0) return { run, written: false };
  const record = installedRecord(entry, (ctx.now ?? (() => new Date()))(), ctx.consent);
  await updateMcpConfig(ctx.configPath, () => [{ op: "set", id: entry.id, server, record }]);
  const health = entry.transports.includes("stdio")
    ? await checkInstalledServer(entry.id, { server, allowedEnv: record.allowed_env ?? [] }, ctx)
    : undefined;
  return { run, written: true, health };
}

/** Remove an entry from the managed block; false when it was not installed. */
export async function uninstallEntry(id: string, ctx: InstallContext): Promise<boolean> {
  let found = false;
  await updateMcpConfig(ctx.configPath, (block) => {
    found = id in block.installed || id in block.mcpServers;
    return found ? [{ op: "remove", id }] : [];
  });
  if (found) await recordHealth(ctx.stateDir, { [id]: null });
  return found;
}
