/**
 * Which workspace a command without `--root` acts on, found from the current directory as git
 * finds its repository: the nearest directory at or above it that holds `service.yaml`, no
 * higher than the repository's top level; else that top level; outside a git repository, the
 * directory itself. So `service status` and `service stop` in `src/lib/` answer for the run of
 * the repository they are in, not for a workspace at `src/lib/` that does not exist.
 */
import { dirname, join } from "node:path";
import { CONFIG_FILE } from "../config/load.ts";

/** What {@link findWorkspaceRoot} reads of the machine (tests give their own). */
export interface WorkspaceRootProbe {
  /** The repository's top level that holds `dir` (`git rev-parse --show-toplevel`), if any. */
  topLevel: (dir: string) => Promise<string | undefined>;
  /** True when `path` exists. */
  exists: (path: string) => Promise<boolean>;
}

const MACHINE: WorkspaceRootProbe = {
  async topLevel(dir) {
    try {
      const out = await new Deno.Command("git", {
        args: ["rev-parse", "--show-toplevel"],
        cwd: dir,
        stdout: "piped",
        stderr: "null",
      }).output();
      const top = new TextDecoder().decode(out.stdout).trim();
      return out.success && top ? top : undefined;
    } catch {
      return undefined; // no git: the directory itself
    }
  },
  exists: (path) => Deno.stat(path).then(() => true, () => false),
};

/** The workspace root for a command started in `cwd` (an absolute, real path). */
export async function findWorkspaceRoot(
  cwd: string,
  probe: WorkspaceRootProbe = MACHINE,
): Promise<string> {
  const top = await probe.topLevel(cwd);
  if (!top) return cwd;
  for (let dir = cwd;;) {
    if (await probe.exists(join(dir, CONFIG_FILE))) return dir;
    const parent = dirname(dir);
    if (dir === top || parent === dir || !dir.startsWith(top)) return top;
    dir = parent;
  }
}
