/**
 * Injected skills (spec §7.3): before a Claude Code agent starts, the service writes its own
 * skills into the agent's worktree as `.claude/skills/service-<name>/SKILL.md` (from
 * `templates/skills/`, embedded in lib/agents/builtin_skills.ts), telling the agent how to report
 * completion, fail and send heartbeats. The files are listed in the repository's
 * `info/exclude` first, so `git add -A` never stages them and they never reach a merge; a path the
 * repository itself tracks is left alone.
 */
import { dirname, join } from "node:path";
import type { AgentAdapter } from "./adapters/types.ts";
import { BUILTIN_SKILLS } from "./builtin_skills.ts";
import { ensureSkillFilesExcluded, SKILL_PREFIX } from "../worktrees/exclude.ts";

/** Where Claude Code reads project skills, relative to its working directory. */
const CLAUDE_SKILLS_DIR = ".claude/skills";

/** The skill files the service injects: path relative to the worktree, and text. Pure. */
export function serviceSkillFiles(): { path: string; text: string }[] {
  return Object.entries(BUILTIN_SKILLS).map(([name, text]) => ({
    path: `${CLAUDE_SKILLS_DIR}/${
      name.startsWith(SKILL_PREFIX) ? name : SKILL_PREFIX + name
    }/SKILL.md`,
    text,
  }));
}

/**
 * Write the service's skills into `worktree` when `adapter` reads Claude Code skills; returns the
 * paths written (relative). Existing files are never overwritten.
 */
export async function injectSkills(adapter: AgentAdapter, worktree: string): Promise<string[]> {
  if (!adapter.claudeSkills) return [];
  await ensureSkillFilesExcluded(worktree);
  const written: string[] = [];
  for (const file of serviceSkillFiles()) {
    const path = join(worktree, file.path);
    await Deno.mkdir(dirname(path), { recursive: true });
    try {
      await Deno.writeTextFile(path, file.text, { createNew: true });
      written.push(file.path);
    } catch (e) {
      // The repository's own file (or an earlier attempt's copy): leave it as it is.
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
  }
  return written;
}
