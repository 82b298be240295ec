/** A small HTTP client of the task API for external workers and the CLI. */
import { findWorkspaceServer } from "../discovery/find.ts";
import { UserFacingError } from "../errors.ts";
import { HttpApiError } from "../http/api_error.ts";
import { createHttpClient, type HttpClient } from "../http/client.ts";
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

/** Read requests the server refused for now (503 with `Retry-After`) are tried this often again. */
const READ_RETRIES = 2;

/** Calls the task API; a refusal is the client's `HttpApiError` (lib/http/api_error.ts). */
export class TaskClient {
  readonly url: string;
  readonly #http: HttpClient;
  readonly #timeoutMs: number;

  constructor(options: TaskClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    const token = options.token ?? Deno.env.get("SERVICE_TOKEN");
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#http = createHttpClient({
      service: "the task server",
      baseUrl: this.url,
      headers: () => {
        const value = typeof token === "function" ? token() : token;
        return {
          accept: "application/json",
          ...(value ? { authorization: `Bearer ${value}` } : {}),
        };
      },
      timeoutMs: this.#timeoutMs,
      retries: READ_RETRIES,
      maxRetryWaitMs: 5_000,
    });
  }

  /**
   * Send a request; JSON in, JSON out (undefined for 204 or an empty body). Throws
   * {@link TaskStoreUnavailable} when the server does not answer, `HttpApiError` when it refuses.
   * `options.token` replaces the client's token for this one request (a worker session's
   * capability).
   */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    options: { token?: string } = {},
  ): Promise<T | undefined> {
    let answer;
    const headers = options.token ? { authorization: `Bearer ${options.token}` } : undefined;
    try {
      answer = await this.#http.request(path, {
        method,
        ...(body === undefined ? {} : { json: body }),
        ...(headers ? { headers } : {}),
      });
    } catch (e) {
      if (e instanceof HttpApiError && e.status === 0) {
        throw new TaskStoreUnavailable(
          this.url,
          e.code === "timeout" ? `no answer within ${this.#timeoutMs} ms` : "connection refused",
        );
      }
      throw e;
    }
    if (answer.status === 204 || answer.body.length === 0) return undefined;
    return answer.json<T>();
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
