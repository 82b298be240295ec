/** Test helper: a real temporary workspace with the in-process app over it. */
import type { Hono } from "hono";
import { appContext } from "../lib/server/serve.ts";
import { createApp } from "../routes/_app.ts";
import type { AppContext, AppEnv } from "../lib/http/context.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";
import { closeTaskStore, setTaskStoreHooks } from "../lib/tasks/registry.ts";
import { accessLogFor } from "../lib/http/access_log.ts";
import { closeTrackerService } from "../lib/trackers/service.ts";

/** A temporary workspace and the app serving it. */
export interface TestWorkspace extends AsyncDisposable {
  root: string;
  ctx: AppContext;
  app: Hono<AppEnv>;
  /** Send a JSON request; answers status and parsed body. */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    // deno-lint-ignore no-explicit-any
  ): Promise<{ status: number; body: any }>;
  /** Flush the export and access log. */
  flush(): Promise<void>;
}

/** Options of {@link testWorkspace}. */
export interface TestWorkspaceOptions {
  config?: string;
  clock?: () => number;
  /** Bearer tokens in force (default none: the caller is the local operator). */
  tokens?: TokenSpec[];
  /** Directory the workspace is made in (default the system's; a small tmpfs in full-disk tests). */
  parent?: string;
}

/** Make a workspace (optionally with a service.yaml) and its app; dispose removes everything. */
export async function testWorkspace(options: TestWorkspaceOptions = {}): Promise<TestWorkspace> {
  const root = await Deno.makeTempDir({ prefix: "service-test-", dir: options.parent });
  if (options.config) await Deno.writeTextFile(`${root}/service.yaml`, options.config);
  const ctx = appContext(root, options.tokens ?? []);
  if (options.clock) setTaskStoreHooks(ctx, { clock: options.clock });
  const app = createApp(ctx);
  const flush = async () => {
    await closeTrackerService(ctx);
    await closeTaskStore(ctx);
    accessLogFor(ctx).flush();
  };
  return {
    root,
    ctx,
    app,
    flush,
    async call(method, path, body, headers = {}) {
      const res = await app.request(path, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined
          ? undefined
          : typeof body === "string"
          ? body
          : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async [Symbol.asyncDispose]() {
      await flush();
      await Deno.remove(root, { recursive: true });
    },
  };
}
