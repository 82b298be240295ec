/**
 * `owned_files` left by a diff (DESIGN.md §18), pure: the changed paths none of a task's
 * `owned_files` entries covers. An entry covers the path itself, everything under it when it is
 * a directory (`src/api` covers `src/api/x.ts`), and what it matches when it is a glob
 * (`src/**\/*.ts`) — the reading the scheduler gives entries when it keeps overlapping tasks
 * apart. A task that declares no owned files owns nothing in particular: nothing is flagged.
 */
import { hasGlobChars, matchGlob } from "../janitor/glob.ts";

function normalise(path: string): string {
  return path.replace(/^(\.\/)+/, "").replace(/^\/+/, "").replace(/\/+$/, "");
}

/** True when the `owned` entry covers `path`. */
function ownedCovers(owned: string, path: string): boolean {
  const [o, p] = [normalise(owned), normalise(path)];
  if (o === "") return false;
  if (p === o || p.startsWith(`${o}/`)) return true;
  return hasGlobChars(o) && (matchGlob(o, p) || matchGlob(`${o}/**`, p));
}

/** The paths of `changed` outside every entry of `owned`, sorted (none when `owned` is empty). */
export function outsideOwned(owned: readonly string[], changed: readonly string[]): string[] {
  if (owned.length === 0) return [];
  return [...new Set(changed.filter((p) => !owned.some((o) => ownedCovers(o, p))))].sort();
}
