/**
 * The worktree environment of a role (DESIGN.md §13), pure: the top-level `worktree` block with
 * the role's own added — its lists (`copy`, `symlink`, `setup`, `teardown`) after the top
 * level's, its other keys in place of the top level's — and the defaults for what neither sets.
 */
import type { WorktreeBlock } from "../config/schema.ts";
import { DEFAULT_IGNORES, exactIgnoreLine } from "../worktrees/ignores.ts";

/** The reason prefix of an attempt whose worktree setup failed (`setup_failed: <command>: <line>`). */
export const SETUP_FAILED = "setup_failed";

/** What one role's agent worktrees get. */
export interface WorktreeEnvSpec {
  /** gitignore-style patterns of untracked files copied from the checkout (`.worktreeinclude` adds to them). */
  copy: string[];
  /** Paths (one `*` per segment allowed) linked into the worktree. */
  symlink: string[];
  /** Shell commands run in the new worktree before the agent starts. */
  setup: string[];
  /** Shell commands run after the work is captured, before the worktree is removed. */
  teardown: string[];
  /** Time limit of the whole setup, and of the whole teardown (seconds). */
  setup_timeout_s: number;
  /** Ports leased per worktree. */
  ports: number;
  /** The ports leases come from, both ends included. */
  port_range: [number, number];
  /** Keep {@link DEFAULT_IGNORES} out of every commit of the worktree. */
  default_ignores: boolean;
}

/** The values of the keys neither the top level nor the role sets. */
export const WORKTREE_ENV_DEFAULTS = {
  setup_timeout_s: 300,
  ports: 0,
  port_range: [20000, 29999] as [number, number],
  default_ignores: true,
} as const;

/** The part of service.yaml the environment is read from. */
export interface WorktreeEnvConfig {
  worktree?: WorktreeBlock;
  roles: Readonly<Record<string, { worktree?: WorktreeBlock }>>;
}

/** Each item of `top` then of `own`, once. */
function added(top: readonly string[] = [], own: readonly string[] = []): string[] {
  return [...new Set([...top, ...own])];
}

/** The worktree environment of `role`'s agents. */
export function worktreeEnvFor(config: WorktreeEnvConfig, role: string): WorktreeEnvSpec {
  const top = config.worktree ?? {};
  const own = config.roles[role]?.worktree ?? {};
  const d = WORKTREE_ENV_DEFAULTS;
  return {
    copy: added(top.copy, own.copy),
    symlink: added(top.symlink, own.symlink).map((p) => p.replace(/\/+$/, "")),
    setup: added(top.setup, own.setup),
    teardown: added(top.teardown, own.teardown),
    setup_timeout_s: own.setup_timeout_s ?? top.setup_timeout_s ?? d.setup_timeout_s,
    ports: own.ports ?? top.ports ?? d.ports,
    port_range: [...(own.port_range ?? top.port_range ?? d.port_range)] as [number, number],
    default_ignores: own.default_ignores ?? top.default_ignores ?? d.default_ignores,
  };
}

/**
 * The lines of a worktree's own exclude file: the build caches (with `default_ignores`), then
 * every linked path and every copied file exactly — never a pattern that could hide a file the
 * agent creates. A linked directory is written without a trailing `/`: git sees the link as a
 * file, and `node_modules/` would not match it.
 */
export function ignoreLinesFor(
  spec: Pick<WorktreeEnvSpec, "default_ignores">,
  linked: readonly string[],
  copied: readonly string[],
): string[] {
  return [
    ...(spec.default_ignores ? DEFAULT_IGNORES : []),
    ...linked.map(exactIgnoreLine),
    ...copied.map(exactIgnoreLine),
  ];
}

/** True when the spec asks for nothing but the default ignores (nothing to copy, link, run or lease). */
export function isPlainWorktree(spec: WorktreeEnvSpec, includeLines: readonly string[]): boolean {
  return spec.copy.length === 0 && includeLines.length === 0 && spec.symlink.length === 0 &&
    spec.setup.length === 0 && spec.teardown.length === 0 && spec.ports === 0;
}

/** Installers that write into a directory of the given name, by the words of their command. */
const INSTALLERS: { dirs: string[]; command: RegExp; effect: string }[] = [
  {
    dirs: ["node_modules"],
    command:
      /(^|[;&|(]\s*|\s)(npm\s+(ci|install|i|update)|pnpm\s+(install|i|add|update)|bun\s+install|yarn(\s+install\b|\s*($|[;&|)])))/,
    effect: "empties or rewrites it",
  },
  {
    dirs: [".venv", "venv"],
    command:
      /(^|[;&|(]\s*|\s)(uv\s+(sync|venv|pip\s+install)|poetry\s+install|pdm\s+(install|sync)|virtualenv\s|python3?\s+-m\s+venv\s|\S*pip3?\s+install)/,
    effect: "installs into it or recreates it",
  },
];

/** A setup command that would write through a link into the checkout's own directory. */
export interface LinkedInstall {
  linked: string;
  command: string;
  effect: string;
}

/**
 * The setup commands of `spec` that install into a directory it links (pure): `npm ci` in a
 * worktree whose `node_modules` is a link empties the checkout's own `node_modules` through it,
 * `uv sync` rewrites the checkout's `.venv`. A directory is linked or installed, never both.
 */
export function linkedInstalls(spec: Pick<WorktreeEnvSpec, "symlink" | "setup">): LinkedInstall[] {
  const out: LinkedInstall[] = [];
  for (const linked of spec.symlink) {
    const name = linked.split("/").at(-1)!;
    for (const installer of INSTALLERS.filter((i) => i.dirs.includes(name))) {
      for (const command of spec.setup.filter((c) => installer.command.test(c))) {
        out.push({ linked, command, effect: installer.effect });
      }
    }
  }
  return out;
}
