/**
 * One task store per server (per AppContext), opened on first use with the workspace's
 * configuration: roles from `service.yaml` (any role when there is none), its
 * `heartbeat_timeout_s` and its top-level `batch_eligible` (the default of a created task).
 */
import { loadConfig, namedAdapter } from "../config/load.ts";
import type { ServiceConfig } from "../config/schema.ts";
import type { AppContext } from "../http/context.ts";
import { TaskStore } from "./store.ts";

const stores = new WeakMap<AppContext, Promise<TaskStore>>();

/** Options tests use to pin the clock of a context's store. */
export interface TaskStoreHooks {
  clock?: () => number;
}

const hooks = new WeakMap<AppContext, TaskStoreHooks>();

/** Pin store options of `ctx` before its first use (tests: an injectable clock). */
export function setTaskStoreHooks(ctx: AppContext, value: TaskStoreHooks): void {
  hooks.set(ctx, value);
}

/** The task store of `ctx`, opened on first call. */
export function taskStoreFor(ctx: AppContext): Promise<TaskStore> {
  let store = stores.get(ctx);
  if (!store) {
    store = (async () => {
      const config = await loadConfig(ctx.paths.root);
      return await TaskStore.open(ctx.paths, {
        roles: config ? new Set(Object.keys(config.roles)) : undefined,
        ...(config ? { knownAdapter: (name: string) => canBuildAdapter(config, name) } : {}),
        heartbeatTimeoutS: config?.heartbeat_timeout_s,
        batchEligible: config?.batch_eligible,
        clock: hooks.get(ctx)?.clock ?? (ctx.now ? () => ctx.now!().getTime() : undefined),
      });
    })();
    store.catch(() => stores.delete(ctx));
    stores.set(ctx, store);
  }
  return store;
}

/** The store of `ctx` if it was opened, without opening it. */
export function openedTaskStore(ctx: AppContext): Promise<TaskStore> | undefined {
  return stores.get(ctx);
}

/** Flush and forget the store of `ctx` (server shutdown, end of a test). */
export async function closeTaskStore(ctx: AppContext): Promise<void> {
  const store = stores.get(ctx);
  if (!store) return;
  stores.delete(ctx);
  await (await store).close();
}

/** True when `config` can build the adapter named `name` (lib/config/load.ts namedAdapter). */
function canBuildAdapter(config: ServiceConfig, name: string): boolean {
  try {
    namedAdapter(config, name);
    return true;
  } catch {
    return false;
  }
}
