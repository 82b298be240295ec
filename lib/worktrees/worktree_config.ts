/**
 * The per-worktree `config.worktree` the service writes into an agent worktree's git directory:
 * one setting, `core.excludesFile`, naming the worktree's own exclude file (./ignores.ts). Its
 * text is the one `git config --worktree core.excludesFile <path>` writes into an empty file, byte
 * for byte, so the file can be written without a git process and checked against a record
 * (lib/worktrees/trees.ts). Pure.
 */
import { join } from "node:path";

/** The name of the exclude file in a worktree's git directory. */
export const WORKTREE_EXCLUDE_FILE = "service-exclude";

/**
 * `value` as git's config writer writes it after `key = `: in double quotes when it starts or
 * ends with a space or holds `;` or `#`; newline, tab, `"` and `\` escaped.
 */
export function gitConfigValue(value: string): string {
  const quote = /^ | $|[;#]/.test(value) ? '"' : "";
  const escaped = value.replace(
    /[\n\t"\\]/g,
    (c) => c === "\n" ? "\\n" : c === "\t" ? "\\t" : `\\${c}`,
  );
  return quote + escaped + quote;
}

/** The text of `config.worktree` for the worktree whose git directory is `adminDir`. */
export function serviceWorktreeConfig(adminDir: string): string {
  return `[core]\n\texcludesFile = ${gitConfigValue(join(adminDir, WORKTREE_EXCLUDE_FILE))}\n`;
}
