/**
 * The filter and merge drivers the configuration defines for an agent's tree, asked of git before
 * each step (lib/git/agent_tree.ts: a host-process agent of another task can add one to the
 * shared configuration at any moment) — but answered from memory while every configuration file
 * git would read stands as it was when git last answered (lib/git/remembered_config.ts: the
 * identity rule, the racy window, the include rule). That was 4.5 `git config` processes per
 * task (issue 32). A file changed within the racy window is trusted when it holds neither
 * `filter` nor `merge`. The answer only ever serves to switch drivers off, so a driver git once
 * listed and that is gone costs nothing.
 */
import { AGENT_TREE_CONFIG, DRIVER_KEYS } from "./hardened.ts";
import { askConfig, type RememberedConfigOptions } from "./remembered_config.ts";

export { RACY_MS } from "./remembered_config.ts";

/** How many listings were asked of git and answered from memory (for tests and benchmarks). */
export const driverListingCounts = { asked: 0, remembered: 0 };

/** Options of {@link listDriverKeys}. */
export interface DriverListingOptions extends RememberedConfigOptions {
  /** The environment git gets (a tree's pinned `GIT_DIR`, `GIT_COMMON_DIR`, `GIT_WORK_TREE`). */
  env?: Record<string, string>;
}

const QUESTION = {
  args: ["--name-only", "--get-regexp", DRIVER_KEYS],
  mentions: /filter|merge/i,
  config: AGENT_TREE_CONFIG,
  counts: driverListingCounts,
};

/**
 * The driver keys (`filter.<name>.clean`, `merge.<name>.driver`, …) the configuration git reads
 * in `cwd` with `options.env` defines, as `git config --get-regexp` names them.
 */
export async function listDriverKeys(
  cwd: string,
  options: DriverListingOptions = {},
): Promise<string[]> {
  return (await askConfig(cwd, QUESTION, options)).values;
}
