/**
 * How a command finds its own workspace's server: `SERVICE_SERVER_URL` when the user names one;
 * else the server `.sdd/runtime/server.json` names, once it has proved (`GET /identity`, see
 * identity.ts) that it serves this workspace. A record whose process is gone is removed. No
 * port is guessed: a server that answers on the configured port but cannot prove it is this
 * workspace's is never taken for it.
 */
import { processAlive } from "../util/process_alive.ts";
import { isLoopbackHost, isWildcardHost } from "../util/loopback.ts";
import { workspacePaths } from "../workspace.ts";
import { identityProof, randomHex } from "./identity.ts";
import { readServerRecord, type ServerRecord, withdrawServer } from "./record.ts";

/** A server a command may talk to. */
export interface FoundServer {
  url: string;
  /** `SERVICE_SERVER_URL` (named by the user, not checked) or `server.json` (proved). */
  via: "SERVICE_SERVER_URL" | "server.json";
  pid?: number;
}

/** The outcome of a search: the server, or why there is none. */
export type ServerSearch =
  | { found: FoundServer }
  | {
    found?: undefined;
    /** Why there is none, as a phrase ("no server runs for this workspace (…)"). */
    why: string;
    /** True when a record was there but not trusted (a stale one, a server that did not prove). */
    notable: boolean;
  };

/** Options of {@link findWorkspaceServer}. */
export interface FindServerOptions {
  /** Environment (default the process's): SERVICE_SERVER_URL, SERVICE_TOKEN. */
  env?: Record<string, string>;
  /** How long the identity request may take (default 3000 ms). */
  timeoutMs?: number;
}

/** Find the server of the workspace at `root`. */
export async function findWorkspaceServer(
  root: string,
  options: FindServerOptions = {},
): Promise<ServerSearch> {
  const env = options.env ?? Deno.env.toObject();
  if (env.SERVICE_SERVER_URL) {
    return {
      found: { url: env.SERVICE_SERVER_URL.replace(/\/+$/, ""), via: "SERVICE_SERVER_URL" },
    };
  }
  const paths = workspacePaths(root);
  const record = await readServerRecord(paths);
  if (!record) {
    return {
      why: "no server runs for this workspace (no .sdd/runtime/server.json)",
      notable: false,
    };
  }
  const untrusted = await untrustedRecord(paths.serverRecord, record);
  if (untrusted) return { why: `ignored .sdd/runtime/server.json: ${untrusted}`, notable: true };
  if (!processAlive(record.pid)) {
    await withdrawServer(paths, record.instance);
    return {
      why: `the server of .sdd/runtime/server.json (pid ${record.pid}, ${record.url}) is gone; ` +
        "its stale record was removed",
      notable: true,
    };
  }
  const problem = await proveIdentity(record, await Deno.realPath(root), {
    token: env.SERVICE_TOKEN,
    timeoutMs: options.timeoutMs ?? 3000,
  });
  if (problem) return { why: problem, notable: true };
  return { found: { url: record.url.replace(/\/+$/, ""), via: "server.json", pid: record.pid } };
}

/**
 * Why a record must not be acted on, or undefined. The command sends its bearer token with the
 * identity request, so the record must be one a server of this user wrote — readable by its
 * owner only, which no file checked out by git is — and name a server on this machine.
 */
async function untrustedRecord(path: string, record: ServerRecord): Promise<string | undefined> {
  const mode = (await Deno.stat(path).catch(() => undefined))?.mode ?? null;
  if (mode !== null && (mode & 0o077) !== 0) {
    return `it is readable by others (mode ${(mode & 0o777).toString(8)}); servers write it 600`;
  }
  let url: URL;
  try {
    url = new URL(record.url);
  } catch {
    return `${JSON.stringify(record.url)} is not a URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `${record.url} is not an http(s) URL`;
  }
  if (!isThisMachine(url.hostname.replace(/^\[|\]$/g, ""))) {
    return `${record.url} is not on this machine`;
  }
  return undefined;
}

/** True for a loopback or wildcard host, or an address of one of this machine's interfaces. */
function isThisMachine(host: string): boolean {
  if (isLoopbackHost(host) || isWildcardHost(host)) return true;
  try {
    return Deno.networkInterfaces().some((ni) => ni.address === host);
  } catch {
    return false;
  }
}

/**
 * Ask the recorded server to prove it serves `workspace` with the recorded instance secret:
 * undefined when it does, else what went wrong.
 */
async function proveIdentity(
  record: ServerRecord,
  workspace: string,
  o: { token?: string; timeoutMs: number },
): Promise<string | undefined> {
  const nonce = randomHex(16);
  const where = `the server at ${record.url} (pid ${record.pid})`;
  let res: Response;
  try {
    res = await fetch(`${record.url}/identity?nonce=${nonce}`, {
      headers: {
        accept: "application/json",
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      },
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (e) {
    return `${where} does not answer (${
      (e as Error).name === "TimeoutError"
        ? `no answer within ${o.timeoutMs} ms`
        : "connection refused"
    })`;
  }
  const body = await res.json().catch(() => undefined) as { proof?: unknown } | undefined;
  if (res.status === 401) {
    return `${where} wants a bearer token before it says whom it serves: set SERVICE_TOKEN`;
  }
  const expected = identityProof({ instance: record.instance, workspace }, nonce);
  if (res.ok && body?.proof === expected) return undefined;
  return `${where} could not prove it serves ${workspace} (HTTP ${res.status})`;
}
