/**
 * Third-party adapters named in service.yaml (spec §7.3's adapters entry point):
 *
 * ```yaml
 * cli: my-cli
 * adapters:
 *   my-cli:
 *     module: adapters/my_cli.ts   # relative to the workspace, or npm:/jsr:/https:/file:
 * ```
 *
 * The module is imported when the configuration is loaded; it either calls `registerAdapter` at
 * import time or default-exports the adapter (also accepted as an export named `adapter`), which
 * is registered under the configured name.
 */
import { adapterProblem, isRegistered, registerAdapter } from "./mod.ts";
import type { AgentAdapter } from "./types.ts";
import { ValueError } from "../errors.ts";
import { userModuleUrl } from "../../util/user_module.ts";

/**
 * Import the adapter module `specifier` for adapter `name` (paths resolve against `root`) and
 * make sure an adapter is registered under `name` afterwards; `ValueError` naming the setting
 * otherwise.
 */
export async function loadAdapterModule(
  name: string,
  specifier: string,
  root: string,
): Promise<void> {
  const setting = `adapters.${name}.module`;
  let mod: Record<string, unknown>;
  try {
    mod = await import(userModuleUrl(specifier, root));
  } catch (e) {
    throw new ValueError(
      `${setting}: cannot import ${specifier}: ${(e as Error).message.split("\n")[0]}`,
      "check the path (relative to the workspace) or the npm:/jsr:/https: specifier",
    );
  }
  if (isRegistered(name)) return;
  const candidate = mod.default ?? mod.adapter;
  const problem = adapterProblem(candidate);
  if (problem) {
    throw new ValueError(
      `${setting}: ${specifier} neither called registerAdapter({ name: "${name}", … }) nor ` +
        `exported an adapter as default (${problem})`,
      "see docs/agents.md, Third-party adapters",
    );
  }
  const adapter = candidate as AgentAdapter;
  if (adapter.name !== name) {
    throw new ValueError(
      `${setting}: ${specifier} exports the adapter "${adapter.name}", not "${name}"`,
      `rename one of them: the key under adapters: is the name \`cli:\` uses`,
    );
  }
  registerAdapter(adapter);
}
