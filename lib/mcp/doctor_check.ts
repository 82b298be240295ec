/** The `service doctor` check of MCP servers: variables resolve; the adapter gets them or not. */
import type { CheckResult } from "../check_result.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { configuredAdapter } from "../config/load.ts";
import { mcpDelivery, runMcpServers } from "./run_servers.ts";

/** One check result, or undefined when no MCP server is configured. */
export async function checkMcpServers(
  config: ServiceConfig,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Promise<CheckResult | undefined> {
  let adapter;
  try {
    adapter = configuredAdapter(config);
  } catch {
    return undefined; // the agent CLI check reports an unknown adapter
  }
  try {
    const note = mcpDelivery(adapter, await runMcpServers(config, env));
    if (!note) return undefined;
    return adapter.acceptsMcpConfig ? { name: "mcp servers", ok: true, detail: note } : {
      name: "mcp servers",
      ok: true,
      warning: true,
      detail: note,
      fix: `${adapter.name} has no runtime MCP configuration flag; set \`cli: claude\` (or qwen) ` +
        "to hand the servers to agents",
    };
  } catch (e) {
    const err = e as Error & { fix?: string };
    return {
      name: "mcp servers",
      ok: false,
      detail: err.message,
      fix: err.fix ?? "see docs/mcp.md",
    };
  }
}
