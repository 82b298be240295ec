/**
 * The I/O edge of an adapter's headless setup: asks the adapter (pure) what its CLI needs beyond
 * the argv under the agent's environment, writes the files it names (the user's own JSON kept
 * underneath, mode 0600 in a 0700 directory), and returns the environment and leading arguments.
 */
import { dirname, join } from "node:path";
import type { AgentAdapter, LaunchFile } from "./adapters/types.ts";

/** The environment and leading arguments of one headless start. */
export interface HeadlessLaunch {
  env: Record<string, string>;
  args: string[];
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `top` deep-merged over `base` (objects merge, anything else in `top` wins). Pure. */
export function mergeJson(base: Json, top: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(top)) {
    out[k] = isObject(v) && isObject(base[k]) ? mergeJson(base[k] as Json, v) : v;
  }
  return out;
}

async function readJsonObject(path: string | undefined): Promise<Json> {
  if (!path) return {};
  try {
    const v = JSON.parse(await Deno.readTextFile(path));
    return isObject(v) ? v : {};
  } catch {
    return {}; // absent or not JSON: the adapter's settings alone
  }
}

async function writeLaunchFile(file: LaunchFile): Promise<void> {
  const json = mergeJson(await readJsonObject(file.mergeOver), file.json);
  await Deno.mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(file.path, JSON.stringify(json, null, 2) + "\n", { mode: 0o600 });
}

/** The adapter's private state directory under the runtime directory. */
function adapterStateDir(runtimeDir: string, adapter: AgentAdapter): string {
  return join(runtimeDir, "agents", adapter.name);
}

/** Prepare a headless start of `adapter` with the agent environment `env`. */
export async function prepareHeadless(
  adapter: AgentAdapter,
  env: Record<string, string>,
  runtimeDir: string,
): Promise<HeadlessLaunch> {
  if (!adapter.headless) return { env, args: [] };
  const setup = adapter.headless(env, adapterStateDir(runtimeDir, adapter));
  for (const file of setup.files) await writeLaunchFile(file);
  return { env: setup.env, args: setup.args };
}
