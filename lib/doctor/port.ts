/**
 * `service doctor`'s port check: the port `service serve` would take is free, or this
 * workspace's own task server listens there — proved by `GET /identity` against
 * `.sdd/runtime/server.json` (lib/discovery), never taken from what `GET /status` claims. Another
 * workspace's server, one that only claims this workspace, or another program fails, naming it.
 */
import type { CheckResult } from "../check_result.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { type ServerSettings, serverSettings } from "../config/server_config.ts";
import { findWorkspaceServer } from "../discovery/find.ts";

/** Options of {@link checkPort}. */
export interface CheckPortOptions {
  /** The environment (SERVICE_PORT, SERVICE_HOST); default this process's. */
  env?: Record<string, string | undefined>;
  /** The workspace: a task server already there must be this workspace's. */
  root?: string;
}

/**
 * The port `service serve` would take (by `config`, undefined without a service.yaml, and
 * SERVICE_PORT) is free, or this workspace's own server answers there.
 */
export async function checkPort(
  config: ServiceConfig | undefined,
  options: CheckPortOptions = {},
): Promise<CheckResult> {
  let settings: ServerSettings;
  try {
    settings = serverSettings(config, options.env ?? Deno.env.toObject());
  } catch (e) {
    return {
      name: "port",
      ok: false,
      detail: (e as Error).message,
      fix: "fix SERVICE_PORT or port in service.yaml",
    };
  }
  const where = `${settings.host}:${settings.port}`;
  try {
    const listener = Deno.listen({ hostname: settings.host, port: settings.port });
    listener.close();
    return { name: "port", ok: true, detail: `${where} is free for \`service serve\`` };
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse)) {
      return {
        name: "port",
        ok: false,
        detail: `cannot bind ${where}: ${(e as Error).message}`,
        fix: "set host/port in service.yaml or SERVICE_PORT",
      };
    }
  }
  // Ours only when it proves it (GET /identity, lib/discovery): what /status says is a claim.
  if (options.root !== undefined && await ownServerOn(options.root, settings.port, options.env)) {
    return { name: "port", ok: true, detail: `the task server is running on ${where}` };
  }
  const answer = await serverAt(where);
  if (answer && options.root === undefined) {
    return { name: "port", ok: true, detail: `the task server is running on ${where}` };
  }
  return { name: "port", ok: false, ...portTaken(where, answer, options.root) };
}

/** Who holds the port, and the fix: another program, or a task server that is not ours. */
function portTaken(
  where: string,
  answer: { workspace?: string } | undefined,
  root: string | undefined,
): { detail: string; fix: string } {
  const port = "give this workspace another port with SERVICE_PORT or `port:` in service.yaml";
  if (!answer) {
    return {
      detail: `${where} is in use by another program`,
      fix: "stop that program, or choose another port with SERVICE_PORT or `port:` in service.yaml",
    };
  }
  if (answer.workspace === undefined || answer.workspace === root) {
    return {
      detail: `${where} is in use by a task server that does not prove it serves this workspace ` +
        "(GET /identity against .sdd/runtime/server.json)",
      fix: `stop it, or ${port}`,
    };
  }
  return {
    detail: `${where} is in use by the task server of another workspace (${answer.workspace})`,
    fix: `stop it (\`service stop --root ${answer.workspace}\`), or ${port}`,
  };
}

/** The task server's answer on `where` (`GET /status`), or undefined when it is not one. */
async function serverAt(where: string): Promise<{ workspace?: string } | undefined> {
  try {
    const res = await fetch(`http://${where}/status`, { signal: AbortSignal.timeout(2000) });
    const body = await res.json().catch(() => ({}));
    if (body?.service !== "service") return undefined;
    return { workspace: typeof body.workspace === "string" ? body.workspace : undefined };
  } catch {
    return undefined; // not ours
  }
}

/** Whether the server of the workspace at `root` (proved by its identity) listens on `port`. */
async function ownServerOn(
  root: string,
  port: number,
  env: Record<string, string | undefined> | undefined,
): Promise<boolean> {
  const vars = Object.fromEntries(
    Object.entries(env ?? Deno.env.toObject()).filter((e): e is [string, string] =>
      e[1] !== undefined
    ),
  );
  const search = await findWorkspaceServer(root, { env: vars }).catch(() => undefined);
  if (!search?.found) return false;
  try {
    return Number(new URL(search.found.url).port) === port;
  } catch {
    return false;
  }
}
