/** A small HTTP client of the task API for external workers and the CLI. */
import { findWorkspaceServer } from "../discovery/find.ts";
import { UserFacingError } from "../errors.ts";
import type { Task } from "./task.ts";

/** How to reach the task server, said once for every command that needs it (spec §7.3). */
const START_THE_SERVER = "start the server in this workspace: `service serve` (port: --port, " +
  "`port` in service.yaml or SERVICE_PORT) or `service run`; commands find it on any port " +
  "through .sdd/runtime/server.json. For a server elsewhere set SERVICE_SERVER_URL";

/** The task server cannot be reached (spec §7.3). */
export class TaskStoreUnavailable extends UserFacingError {
  constructor(readonly url: string | undefined, detail = "connection refused") {
    super(url ? `${detail} at ${url}` : detail, 1, START_THE_SERVER);
    this.name = "TaskStoreUnavailable";
  }
}

/** The server answered with an error body. */
export class TaskApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(`HTTP ${status} ${code}: ${message}`);
    this.name = "TaskApiError";
  }
}

/** Options of {@link TaskClient}. */
export interface TaskClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:8052`. */
  url: string;
  /**
   * Bearer token (default SERVICE_TOKEN); a function is asked at every request (a token file
   * that is rotated, lib/auth/secret_env.ts).
   */
  token?: string | (() => string | undefined);
  /** Per-request timeout in ms (default 10 000). */
  timeoutMs?: number;
}

/**
 * The URL of the workspace's own server (lib/discovery/find.ts): SERVICE_SERVER_URL, else the
 * one `.sdd/runtime/server.json` names once it proved it serves this workspace. Throws
 * TaskStoreUnavailable, saying why, when there is none.
 */
export async function serverUrlFor(root: string, env = Deno.env.toObject()): Promise<string> {
  const search = await findWorkspaceServer(root, { env });
  if (search.found) return search.found.url;
  throw new TaskStoreUnavailable(undefined, search.why);
}

/** Calls the task API. */
export class TaskClient {
  readonly url: string;
  readonly #token: () => string | undefined;
  readonly #timeoutMs: number;

  constructor(options: TaskClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    const token = options.token ?? Deno.env.get("SERVICE_TOKEN");
    this.#token = typeof token === "function" ? token : () => token;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /**
   * Send a request; JSON in, JSON out (undefined for 204). `options.token` replaces the client's
   * token for this one request (a worker session's capability).
   */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    options: { token?: string } = {},
  ): Promise<T | undefined> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const token = options.token ?? this.#token();
    if (token) headers.authorization = `Bearer ${token}`;
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (e) {
      const err = e as Error;
      if (err.name === "TimeoutError") {
        throw new TaskStoreUnavailable(this.url, "no answer within " + this.#timeoutMs + " ms");
      }
      throw new TaskStoreUnavailable(this.url);
    }
    if (res.status === 204) {
      await res.body?.cancel();
      return undefined;
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new TaskApiError(res.status, "invalid_response", text.slice(0, 200));
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code?: string; message?: string } })?.error;
      throw new TaskApiError(res.status, e?.code ?? "error", e?.message ?? text.slice(0, 200));
    }
    return parsed as T;
  }

  /** Claim the next ready task of `role` (undefined when none is ready). */
  claimNext(role?: string, sessionId?: string): Promise<Task | undefined> {
    const q = role ? `?role=${encodeURIComponent(role)}` : "";
    return this.request<Task>(
      "POST",
      `/tasks/next${q}`,
      sessionId ? { session_id: sessionId } : {},
    );
  }

  /** One task. */
  async get(id: string): Promise<Task> {
    return (await this.request<Task>("GET", `/tasks/${encodeURIComponent(id)}`))!;
  }

  /** The status object. */
  async status(): Promise<Record<string, unknown>> {
    return (await this.request<Record<string, unknown>>("GET", "/status"))!;
  }
}
