/**
 * The MCP servers of a run (issue 13): the entries installed from the catalog (the
 * `service-managed` block of the user's mcp.json) overridden by `mcp_servers` of service.yaml.
 * Every `${VAR}` of service.yaml resolves (the user wrote it); an installed entry's resolve only
 * when its user allowed the name at install, the rest reach the server as written. Adapters that take a runtime MCP configuration get it as a file
 * (`.sdd/runtime/mcp/<run_id>.json`, mode 0600: resolved values may be secrets); the others are
 * named so the user knows their agents will not see the servers.
 */
import { dirname } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { CONFIG_FILE } from "../config/load.ts";
import { type ManagedBlock, managedBlock, readConfigText } from "../catalog/managed_config.ts";
import { type EnvLookup, userPaths } from "../catalog/user_paths.ts";
import { runMcpConfigPath, type WorkspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { referencedNames, resolveAllowedVars, resolveVars } from "../config/resolve_vars.ts";

/** Server definitions by name, as MCP clients read them (`command`/`args`/`env`, or `url`). */
export type McpServers = Record<string, Record<string, unknown>>;

/** The servers of a run and where each came from. */
export interface RunMcpServers {
  servers: McpServers;
  origin: Record<string, "service.yaml" | "installed">;
  /** Installed servers whose `${NAME}` were not allowed at install, passed as written. */
  asWritten: Record<string, string[]>;
}

/** Options of {@link mergeMcpServers}. */
export interface MergeMcpOptions {
  /** The `service-managed` block of the user's mcp.json. */
  block: ManagedBlock;
  env: EnvLookup;
  /** The mcp.json the block comes from, for errors. */
  installedFile: string;
}

/** Merge installed entries and service.yaml overrides, resolving `${VAR}` (pure). */
export function mergeMcpServers(config: ServiceConfig, options: MergeMcpOptions): RunMcpServers {
  const fromCatalog: McpServers = {};
  const asWritten: Record<string, string[]> = {};
  for (const [id, server] of Object.entries(options.block.mcpServers)) {
    const allowed = options.block.installed[id]?.allowed_env ?? [];
    fromCatalog[id] = resolveAllowedVars(
      server as unknown as Record<string, unknown>,
      allowed,
      {
        env: options.env,
        prefix: ["service-managed", "mcpServers", id],
        file: options.installedFile,
      },
    );
    const literal = referencedNames(server).filter((n) => !allowed.includes(n));
    if (literal.length > 0) asWritten[id] = literal;
  }
  const fromProject = resolveVars(config.mcp_servers ?? {}, {
    env: options.env,
    prefix: ["mcp_servers"],
    file: CONFIG_FILE,
  });
  const origin: RunMcpServers["origin"] = {};
  for (const id of Object.keys(fromCatalog)) origin[id] = "installed";
  for (const id of Object.keys(fromProject)) {
    origin[id] = "service.yaml";
    delete asWritten[id];
  }
  return { servers: { ...fromCatalog, ...fromProject }, origin, asWritten };
}

/** The run's servers from service.yaml and the user's mcp.json (`$XDG_CONFIG_HOME/service`). */
export async function runMcpServers(config: ServiceConfig, env: EnvLookup): Promise<RunMcpServers> {
  const file = userPaths(env).mcpConfig;
  const block = managedBlock(await readConfigText(file), file);
  return mergeMcpServers(config, { block, env, installedFile: file });
}

/** What happens to the servers with `adapter`, in one sentence (for run, agents and doctor). */
export function mcpDelivery(adapter: AgentAdapter, run: RunMcpServers): string | undefined {
  const names = Object.keys(run.servers);
  if (names.length === 0) return undefined;
  const list = `${names.length} MCP server${names.length === 1 ? "" : "s"} (${names.join(", ")})`;
  const literal = Object.entries(run.asWritten).map(([id, vars]) =>
    `; ${id} gets ${vars.map((v) => `\${${v}}`).join(", ")} as written (not allowed at install: ` +
    `\`service mcp catalog install ${id}\` again to allow)`
  ).join("");
  return adapter.acceptsMcpConfig
    ? `${list} passed to ${adapter.name} agents with --mcp-config${literal}`
    : `${list} configured, but ${adapter.name} takes no runtime MCP configuration: its agents ` +
      "will not get them (configure them in the CLI's own settings, or use claude or qwen)";
}

/** The variables an agent's CLI needs when it is given the run's MCP configuration. */
export function mcpSessionEnv(
  adapter: AgentAdapter,
  mcpConfigPath: string | undefined,
): Readonly<Record<string, string>> {
  return adapter.acceptsMcpConfig && mcpConfigPath ? adapter.mcpEnv ?? {} : {};
}

/**
 * Write the run's MCP configuration for adapters that accept one; undefined when there is
 * nothing to write or the adapter would ignore it.
 */
export async function writeRunMcpConfig(
  paths: WorkspacePaths,
  runId: string,
  adapter: AgentAdapter,
  run: RunMcpServers,
): Promise<string | undefined> {
  if (!adapter.acceptsMcpConfig || Object.keys(run.servers).length === 0) return undefined;
  const file = runMcpConfigPath(paths, runId);
  await Deno.mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, JSON.stringify({ mcpServers: run.servers }, null, 2) + "\n", 0o600);
  return file;
}

/** What `service agents` says about MCP servers. */
export interface McpReport {
  names: string[];
  /** The configured adapter gets them. */
  delivered: boolean;
  note?: string;
}

/** The MCP servers against the configured adapter (throws on an unset variable). */
export async function mcpReport(config: ServiceConfig, adapter: AgentAdapter): Promise<McpReport> {
  const run = await runMcpServers(config, (n) => Deno.env.get(n));
  return {
    names: Object.keys(run.servers),
    delivered: adapter.acceptsMcpConfig,
    note: mcpDelivery(adapter, run),
  };
}
