/**
 * Commands the service runs on an agent's work after its session — completion-signal commands,
 * quality gates and evidence producers on the tree a merge would produce, and a worktree's
 * teardown — run, under `isolation: container`, in containers of the agent image (DESIGN.md
 * §14), because they execute the agent's code (its tests, its scripts): the tree mounted
 * read-write, the repository's git directory read-only with the tree's own git files
 * read-write, the network given (none for gates), the configured limits, the non-root user, and
 * nothing else of the host. {@link TreeRunner.release} hands the tree back to the service's user.
 */
import { join, resolve } from "node:path";
import { git } from "../git/git.ts";
import type { Launcher } from "../process/launcher.ts";
import { chownTree } from "./git_shadow.ts";
import { containerLauncher } from "./launcher.ts";
import type { ContainerIsolation } from "./probe.ts";
import { runtimeEnvironment } from "./runtime.ts";
import { containerEnvironment, LABELS, workspaceLabel } from "./session.ts";

/** Where a tree's commands run, and how to give the tree back. */
export interface TreeRunner {
  launcher: Launcher;
  /** The environment inside, from the one the commands would get on the host. */
  env(hostEnv: Record<string, string> | undefined): Record<string, string>;
  /** Give the tree back to the service's user (idempotent; never throws). */
  release(): Promise<void>;
}

/** Options of {@link treeContainer}. */
export interface TreeContainerOptions {
  /** The workspace root (the label of its containers). */
  root: string;
  /** The worktree the commands run in. */
  tree: string;
  runId: string;
  /** `gate` (signals, quality gates, producers) or `teardown`. */
  phase: "gate" | "teardown";
  network: "none" | "default";
  processEnv: Record<string, string>;
  /** `.sdd/runtime`: where a tree handed to the container's user is recorded until given back. */
  runtimeDir: string;
}

/** What a handed tree's record holds (`<runtime>/handed/<name>.json`). */
interface HandedRecord {
  paths: string[];
  owner: { uid: number; gid: number };
}

/** The directory of the records of trees handed to a container's user. */
function handedDir(runtimeDir: string): string {
  return join(runtimeDir, "handed");
}

/**
 * Give back every tree a container's user still holds because the service that handed it ended
 * first (a SIGKILL during a gate or a teardown); returns the problems. Only call it when no
 * orchestrator runs.
 */
export async function reclaimHandedTrees(runtimeDir: string): Promise<string[]> {
  const problems: string[] = [];
  const dir = handedDir(runtimeDir);
  for (const e of await Array.fromAsync(Deno.readDir(dir)).catch(() => [])) {
    const file = join(dir, e.name);
    try {
      const record = JSON.parse(await Deno.readTextFile(file)) as HandedRecord;
      const there: string[] = [];
      for (const p of record.paths) {
        if (await Deno.lstat(p).then(() => true, () => false)) there.push(p);
      }
      if (there.length > 0) await chownTree(there, record.owner);
      await Deno.remove(file);
    } catch (err) {
      problems.push(`${e.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** Containers for the commands run in `o.tree`; nothing runs until the launcher is used. */
export async function treeContainer(
  iso: ContainerIsolation,
  o: TreeContainerOptions,
): Promise<TreeRunner> {
  const gitFile = await Deno.readTextFile(join(o.tree, ".git"));
  const admin = /^gitdir: (.+)$/m.exec(gitFile)?.[1]?.trim();
  if (!admin) throw new Error(`${o.tree}/.git does not name the worktree's git directory`);
  const adminDir = resolve(o.tree, admin);
  const common = await git(["rev-parse", "--git-common-dir"], { cwd: o.tree });
  const commonDir = resolve(o.tree, common.stdout.trim());
  const owner = { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 };
  const handed = iso.user.chown ? [o.tree, adminDir] : [];
  const id = crypto.randomUUID().slice(0, 8);
  const record = join(handedDir(o.runtimeDir), `${o.phase}-${id}.json`);
  if (handed.length > 0) {
    // Recorded first: a service killed before it gives the tree back finds it at its next start.
    await Deno.mkdir(handedDir(o.runtimeDir), { recursive: true });
    await Deno.writeTextFile(record, JSON.stringify({ paths: handed, owner } as HandedRecord));
    await chownTree(handed, iso.user);
  }
  let released: Promise<void> | undefined;
  let n = 0;
  return {
    launcher: containerLauncher({
      runtime: iso.runtime,
      runtimeEnv: runtimeEnvironment(o.processEnv),
      base: {
        runtime: iso.runtime.name,
        labels: {
          [LABELS.workspace]: workspaceLabel(o.root),
          [LABELS.run]: o.runId,
          [LABELS.phase]: o.phase,
        },
        image: iso.image.ref,
        mounts: [
          { source: o.tree, readOnly: false },
          { source: commonDir, readOnly: true },
          { source: adminDir, readOnly: false },
        ],
        user: iso.user,
        memoryMb: iso.settings.memoryMb,
        cpuCores: iso.settings.cpuCores,
        network: o.network,
        addHosts: [],
        lowPorts: false,
        relabel: iso.runtime.selinux,
      },
      relays: [],
      name: () => `service-${o.phase}-${id}-${++n}`,
    }),
    env: (hostEnv) => containerEnvironment(hostEnv ?? {}, { network: o.network }),
    release: () =>
      released ??= handed.length === 0
        ? Promise.resolve()
        : chownTree(handed, owner).then(() => Deno.remove(record)).catch(() => {
          // Left recorded: the next start gives it back (reclaimHandedTrees).
        }),
  };
}
