/**
 * The health check of an installed stdio MCP server: start it with its command, args and env and
 * perform a real MCP `initialize` handshake with the official SDK client; list its tools when it
 * offers them. Outcomes are kept per user under `$XDG_STATE_HOME/service/mcp_health.json`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { join } from "node:path";
import type { ManagedServer } from "./managed_config.ts";
import { scrubbedEnvironment } from "./sandbox.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { SERVICE_VERSION } from "../version.ts";

/** Default time limit of the start and the handshake. */
const HEALTH_TIMEOUT_MS = 60_000;

/** The outcome of one health check. */
export interface HealthOutcome {
  ok: boolean;
  checked_at: string;
  duration_ms: number;
  /** The server's `serverInfo` from its initialize result. */
  server?: { name: string; version: string };
  protocol_version?: string;
  /** Number of tools it lists (when it offers tools). */
  tools?: number;
  /** Why it failed, in words, with the server's last stderr lines. */
  error?: string;
}

/** Options of {@link checkServerHealth}. */
export interface HealthOptions {
  processEnv: Record<string, string>;
  timeoutMs?: number;
  cwd?: string;
}

/** Start `server` and shake hands with it; never throws. */
export async function checkServerHealth(
  server: ManagedServer,
  options: HealthOptions,
): Promise<HealthOutcome> {
  const started = performance.now();
  const checkedAt = new Date().toISOString();
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: { ...scrubbedEnvironment(options.processEnv), ...server.env },
    stderr: "pipe",
    cwd: options.cwd ?? Deno.cwd(),
  });
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr.push(...String(chunk).split("\n").filter((l) => l.trim() !== ""));
    if (stderr.length > 20) stderr.splice(0, stderr.length - 20);
  });
  let protocolVersion: string | undefined;
  // The client hands the negotiated version to its transport; the stdio transport ignores it.
  transport.setProtocolVersion = (v: string) => {
    protocolVersion = v;
  };
  const client = new Client({ name: "service", version: SERVICE_VERSION });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no initialize answer within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([client.connect(transport, { timeout: timeoutMs }), deadline]);
    const info = client.getServerVersion();
    let tools: number | undefined;
    if (client.getServerCapabilities()?.tools) {
      tools = (await Promise.race([client.listTools(undefined, { timeout: timeoutMs }), deadline]))
        .tools.length;
    }
    return {
      ok: true,
      checked_at: checkedAt,
      duration_ms: Math.round(performance.now() - started),
      server: info ? { name: info.name, version: info.version } : undefined,
      protocol_version: protocolVersion,
      tools,
    };
  } catch (e) {
    const message = (e as Error).message ?? String(e);
    const reason = /ENOENT|not found/i.test(message)
      ? `${server.command}: command not found on PATH`
      : message;
    return {
      ok: false,
      checked_at: checkedAt,
      duration_ms: Math.round(performance.now() - started),
      error: stderr.length > 0
        ? `${reason}; server stderr: ${stderr.slice(-5).join(" | ")}`
        : reason,
    };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

/** The recorded outcomes, by server id. */
export type HealthRecords = Record<string, HealthOutcome>;

function healthFile(stateDir: string): string {
  return join(stateDir, "mcp_health.json");
}

/** Read the recorded outcomes (empty when none). */
export async function readHealth(stateDir: string): Promise<HealthRecords> {
  try {
    return JSON.parse(await Deno.readTextFile(healthFile(stateDir))) as HealthRecords;
  } catch {
    return {};
  }
}

/** Record outcomes (merged over the earlier ones; `null` forgets an id). */
export async function recordHealth(
  stateDir: string,
  outcomes: Record<string, HealthOutcome | null>,
): Promise<void> {
  await Deno.mkdir(stateDir, { recursive: true });
  const all = await readHealth(stateDir);
  for (const [id, o] of Object.entries(outcomes)) {
    if (o === null) delete all[id];
    else all[id] = o;
  }
  await writeFileAtomic(healthFile(stateDir), JSON.stringify(all, null, 2) + "\n");
}
