/**
 * Commands the service runs on an agent's work after its session — completion-signal commands,
 * quality gates and evidence producers on the tree a merge would produce, and a worktree's
 * teardown — run, under `isolation: container`, in containers of the agent image (DESIGN.md
 * §14), because they execute the agent's code (its tests, its scripts): the tree mounted
 * read-write (its `.git` file read-only), the repository's git directory read-only with a
 * session copy of the tree's own git directory read-write, the network given (none for gates),
 * the configured limits, the non-root user, and nothing else of the host.
 * {@link TreeRunner.release} hands the tree back to the service's user.
 */
import { join } from "node:path";
import type { Launcher } from "../process/launcher.ts";
import { treeRecordOf } from "../worktrees/trees.ts";
import { adminDirCopy, chownTree } from "./git_shadow.ts";
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
  processEnv: Readonly<Record<string, string>>;
  /** `.sdd/runtime`: where a tree handed to the container's user is recorded until given back. */
  runtimeDir: string;
}

/** What a handed tree's record holds (`<runtime>/handed/<name>.json`). */
interface HandedRecord {
  paths: string[];
  owner: { uid: number; gid: number };
  /** The session copy of the tree's git directory, removed once the tree is given back. */
  copy?: string;
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
    if (!e.name.endsWith(".json")) continue;
    const file = join(dir, e.name);
    try {
      const record = JSON.parse(await Deno.readTextFile(file)) as HandedRecord;
      const there: string[] = [];
      for (const p of record.paths) {
        if (await Deno.lstat(p).then(() => true, () => false)) there.push(p);
      }
      if (there.length > 0) await chownTree(there, record.owner);
      if (record.copy) await Deno.remove(record.copy, { recursive: true }).catch(() => {});
      await Deno.remove(file);
    } catch (err) {
      problems.push(`${e.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * Containers for the commands run in `o.tree`; nothing runs until the launcher is used. They
 * write a session copy of the tree's git directory, mounted over the real one (as an agent's
 * container does, lib/container/git_shadow.ts), and its `.git` file is read-only: what the
 * host's git reads there afterwards is what the service made.
 */
export async function treeContainer(
  iso: ContainerIsolation,
  o: TreeContainerOptions,
): Promise<TreeRunner> {
  const record = await treeRecordOf(o.tree);
  const { admin_dir: adminDir, common_dir: commonDir } = record;
  const owner = { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 };
  const id = crypto.randomUUID().slice(0, 8);
  const file = join(handedDir(o.runtimeDir), `${o.phase}-${id}.json`);
  const copy = join(handedDir(o.runtimeDir), `${o.phase}-${id}.admin`);
  const handed = iso.user.chown ? [record.worktree, copy] : [];
  // Recorded first: a service killed before it gives the tree back finds it at its next start.
  await Deno.mkdir(handedDir(o.runtimeDir), { recursive: true });
  await Deno.writeTextFile(file, JSON.stringify({ paths: handed, owner, copy } as HandedRecord));
  const adminMount = await adminDirCopy(adminDir, copy);
  if (handed.length > 0) await chownTree(handed, iso.user);
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
          { source: record.worktree, readOnly: false },
          { source: join(record.worktree, ".git"), readOnly: true },
          { source: commonDir, readOnly: true },
          adminMount,
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
      released ??= (async () => {
        if (handed.length > 0) await chownTree(handed, owner);
        await Deno.remove(copy, { recursive: true });
        await Deno.remove(file);
      })().catch(() => {
        // Left recorded: the next start gives it back (reclaimHandedTrees).
      }),
  };
}
