/**
 * The pull-request body's section on protected paths (DESIGN.md §18), pure: the paths the
 * change touches that the service protects, and that it merges only on an operator's decision.
 * Paths come from git, but a file name may hold anything: each is written escaped in a code span.
 * Files over `max_landed_file_mb` get a section of their own, with their sizes.
 */
import { sizeText } from "../util/size_words.ts";

/** Paths listed before "… and N more". */
const LISTED = 50;

/** A path inside a Markdown code span: control characters and backticks escaped. */
function codeText(path: string): string {
  return JSON.stringify(path).slice(1, -1).replace(/`/g, "\\u0060");
}

/** The section's lines (none when the change touches no protected path). */
export function protectedSection(paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  return [
    "",
    "### Protected paths",
    "",
    "This change touches paths the service protects (`protected_paths`); it merges only after " +
    "an operator's merge decision on the review board:",
    "",
    ...paths.slice(0, LISTED).map((p) => `- \`${codeText(p)}\``),
    ...(paths.length > LISTED ? [`- … and ${paths.length - LISTED} more`] : []),
  ];
}

/** The section on files over `max_landed_file_mb` (none when the change adds none). */
export function oversizedSection(
  oversized: { files: readonly { path: string; bytes: number }[]; limitBytes: number } | undefined,
): string[] {
  if (!oversized || oversized.files.length === 0) return [];
  const { files, limitBytes } = oversized;
  return [
    "",
    "### Files over the size limit",
    "",
    `This change adds or grows files over \`max_landed_file_mb\` (${sizeText(limitBytes)}); it ` +
    "merges only after an operator's merge decision on the review board:",
    "",
    ...files.slice(0, LISTED).map((f) => `- \`${codeText(f.path)}\`: ${sizeText(f.bytes)}`),
    ...(files.length > LISTED ? [`- … and ${files.length - LISTED} more`] : []),
  ];
}
