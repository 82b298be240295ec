/**
 * `service mcp catalog` as a user runs it: a fresh CLI process per command in a temporary HOME,
 * the catalog served by a local HTTP server the test changes as it goes, a hand-written JSONC
 * mcp.json. Shared by the catalog CLI tests and the hostile-catalog table.
 */
import { join } from "node:path";
import { CLI } from "./helpers.ts";
import { editManaged, type InstalledRecord } from "../lib/catalog/managed_config.ts";

/** The user's own mcp.json before any install (its bytes must stay). */
export const USER_CONFIG = `// my own MCP setup
{
  "mcpServers": {
    "mine": { "command": "my-server",   "args": [] }, // hand-formatted
  },
}
`;

/** The value of a secret in the user's environment that no catalog may see unasked. */
export const USER_SECRET = "must-not-reach-installers";

/** What a command printed and how it ended. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of one CLI run. */
export interface CliRunOptions {
  /** Written to standard input, then closed. */
  stdin?: string;
  /** More environment variables. */
  env?: Record<string, string>;
  /** The run is killed after this long and the test fails (default 120 s). */
  timeoutMs?: number;
}

/** A catalog workspace: its HOME, its mcp.json, the served catalog, and the CLI. */
export interface CatalogWorkspace extends AsyncDisposable {
  home: string;
  configPath: string;
  /** What the server answers: the entries, a broken document, or a redirect to `redirect`. */
  catalog: { entries: Record<string, unknown>[]; broken: boolean; redirect?: string };
  /** `service mcp catalog …args`. */
  run(args: string[], stdinOrOptions?: string | CliRunOptions): Promise<CliRun>;
}

/** The catalog document text of `entries`. */
export function catalogDocument(entries: Record<string, unknown>[]): string {
  return JSON.stringify({ version: 1, generated_at: "2026-11-01T12:00:00Z", entries });
}

/** A fresh workspace with the user's mcp.json and a catalog server on a free loopback port. */
export async function catalogWorkspace(): Promise<CatalogWorkspace> {
  const home = await Deno.makeTempDir({ prefix: "mcp-cli-" });
  const catalog: CatalogWorkspace["catalog"] = { entries: [], broken: false };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    if (catalog.redirect) {
      return new Response(null, { status: 302, headers: { location: catalog.redirect } });
    }
    const body = catalog.broken
      ? JSON.stringify({ version: 1, generated_at: "soon", entries: [{ id: "Bad" }] })
      : catalogDocument(catalog.entries);
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
  const configPath = join(home, ".config", "service", "mcp.json");
  await Deno.mkdir(join(home, ".config", "service"), { recursive: true });
  await Deno.writeTextFile(configPath, USER_CONFIG);
  return {
    home,
    configPath,
    catalog,
    async run(args, stdinOrOptions) {
      const options = typeof stdinOrOptions === "string"
        ? { stdin: stdinOrOptions }
        : stdinOrOptions ?? {};
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", CLI, "--root", home, "mcp", "catalog", ...args],
        clearEnv: true,
        env: {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: home,
          DENO_DIR: Deno.env.get("DENO_DIR") ??
            join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
          NO_COLOR: "1",
          RUST_BACKTRACE: "0",
          SERVICE_MCP_CATALOG_URL: `http://127.0.0.1:${server.addr.port}/catalog.json`,
          SECRET_TOKEN: USER_SECRET,
          ...options.env,
        },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      if (options.stdin !== undefined) await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
      const limit = options.timeoutMs ?? 120_000;
      const timer = setTimeout(() => child.kill("SIGKILL"), limit);
      try {
        const out = await child.output();
        const dec = new TextDecoder();
        const result = {
          code: out.code,
          stdout: dec.decode(out.stdout),
          stderr: dec.decode(out.stderr),
        };
        if (out.signal === "SIGKILL") {
          throw new Error(
            `service mcp catalog ${args.join(" ")} did not finish within ${limit} ms:\n` +
              result.stdout + result.stderr,
          );
        }
        return result;
      } finally {
        clearTimeout(timer);
      }
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(home, { recursive: true });
    },
  };
}

/**
 * Write `entry` into the managed block as if its user had installed it earlier, with the record
 * fields in `record` (the user's consent) over the defaults.
 */
export async function recordInstall(
  ws: CatalogWorkspace,
  entry: Record<string, unknown>,
  record: Partial<InstalledRecord> = {},
): Promise<void> {
  const text = await Deno.readTextFile(ws.configPath);
  await Deno.writeTextFile(
    ws.configPath,
    editManaged(text, [{
      op: "set",
      id: entry.id as string,
      server: {
        command: entry.command as string,
        args: (entry.args as string[]) ?? [],
        env: (entry.env as Record<string, string>) ?? {},
      },
      record: {
        version_pin: entry.version_pin as string,
        installed_at: "2026-11-01T12:00:00.000Z",
        verified_by_service: entry.verified_by_service as boolean,
        auto_upgrade: false,
        install_command: entry.install_command as string[],
        allowed_env: [],
        ...record,
      },
    }]),
  );
}
