/**
 * Judging a task's diff (DESIGN.md §18): which changed paths are protected, and which lie
 * outside the task's `owned_files` — on the commits the service captured, never on what the
 * agent says. The rules are built once per run: the configured globs, the modules service.yaml
 * imports, and the plan files of this run and every earlier one its journals name.
 */
import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { WorkspacePaths } from "../workspace.ts";
import { changesAndLinks } from "./diff_paths.ts";
import type { RawChange } from "../diff/raw_listing.ts";
import { outsideOwned } from "./owned.ts";
import { blobSizes } from "../git/object_sizes.ts";
import { newFileIds, oldFileIds, type OversizedFile, oversizedFiles } from "./file_sizes.ts";
import { recordedPlanFiles } from "./plan_files.ts";
import { protectedChanges, type ProtectionRules, protectionRules } from "./rules.ts";

/** What a diff was found to touch. */
export interface Judgement {
  /** Changed paths the rules protect (sorted). */
  protected: string[];
  /** Changed paths outside the task's owned_files (sorted; none when it declares none). */
  outsideOwned: string[];
  /** Files the diff adds or grows over `max_landed_file_mb` (./file_sizes.ts), in git's order. */
  oversized: OversizedFile[];
}

/** A judgement, or why the diff could not be read (then nothing may land unattended). */
export type JudgeResult = Judgement | { error: string };

/** What the protection of a run is configured with. */
export interface ProtectionOptions {
  paths: WorkspacePaths;
  /** `protected_paths` of service.yaml. */
  protectedPaths: readonly string[];
  /** `max_landed_file_mb` of service.yaml in bytes (./file_sizes.ts); null or absent: no limit. */
  maxFileBytes?: number | null;
  /** Module specifiers service.yaml imports (`adapters.<n>.module`, `trackers.<n>.module`). */
  modules: readonly string[];
  /** The plan file of the run being started, before its journal names it. */
  planFile?: string;
}

/** The diff to judge: `git diff <base> <tip>` in `cwd`, of a task owning `owned`. */
export interface DiffToJudge {
  cwd: string;
  base: string;
  tip: string;
  owned: readonly string[];
  /**
   * The leaves git listed for `git diff <base> <tip>` already (base and tip commit ids: the
   * captured diff's listing, lib/diff/raw_listing.ts); absent, git is asked here.
   */
  raw?: readonly RawChange[];
}

/** The workspace-relative paths of the module specifiers that are files of the workspace. */
export function workspaceModules(specifiers: readonly string[], root: string): string[] {
  return specifiers.flatMap((s) => {
    if (/^(npm|jsr|https?|data|node):/.test(s)) return [];
    const path = s.startsWith("file:") ? fileURLToPath(s) : s;
    return [isAbsolute(path) ? relative(root, path) : path];
  });
}

/** The protection of one run: its rules, built once, and the judgement of each diff. */
export class Protection {
  readonly #o: ProtectionOptions;
  #rules: Promise<ProtectionRules> | undefined;

  constructor(options: ProtectionOptions) {
    this.#o = options;
  }

  /** `max_landed_file_mb` in bytes; null: no limit. */
  get maxFileBytes(): number | null {
    return this.#o.maxFileBytes ?? null;
  }

  /** The rules (the journals' plan files are read on first use). */
  rules(): Promise<ProtectionRules> {
    return this.#rules ??= (async () => {
      const o = this.#o;
      const recorded = await recordedPlanFiles(o.paths);
      const own = o.planFile === undefined ? [] : [relative(o.paths.root, o.planFile)];
      return protectionRules({
        user: o.protectedPaths,
        planFiles: [...own, ...recorded],
        modules: workspaceModules(o.modules, o.paths.root),
      });
    })();
  }

  /** Judge `git diff <base> <tip>` in `cwd` against the rules and `owned` (never throws). */
  async judge(diff: DiffToJudge): Promise<JudgeResult> {
    const { cwd, base, tip, owned, raw } = diff;
    try {
      const rules = await this.rules();
      const listed = await changesAndLinks(cwd, { base, tip, rules, raw });
      const { changes, links } = listed;
      return {
        protected: protectedChanges(rules, { changes, links }),
        outsideOwned: outsideOwned(owned, changes.map((c) => c.path)),
        oversized: await this.#oversized(cwd, listed.raw),
      };
    } catch (e) {
      return { error: `its changed paths could not be read: ${(e as Error).message}` };
    }
  }

  /** The files of `raw` over `max_landed_file_mb`, sized from git's objects (loose: no process). */
  async #oversized(cwd: string, raw: readonly RawChange[]): Promise<OversizedFile[]> {
    const limit = this.maxFileBytes;
    if (limit === null) return [];
    const sizes = await blobSizes(cwd, newFileIds(raw));
    // The base's side only of a file over the limit that was a file before: did it grow?
    const before = oldFileIds(raw, sizes, limit);
    if (before.length > 0) { for (const [id, n] of await blobSizes(cwd, before)) sizes.set(id, n); }
    return oversizedFiles(raw, sizes, limit);
  }
}
