/** Identifier rules (DESIGN.md §4): run and task ids can never name a path outside `.sdd/runs/`. */
import { InvalidInputError } from "./errors.ts";

/** Pattern shared by run ids and task ids. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The rule of {@link isValidId} in words, for messages that say how to fix an id. */
export const ID_RULE =
  "1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit, and no '..'";

/** True when `id` is a safe run or task id. */
export function isValidId(id: string): boolean {
  return ID_PATTERN.test(id) && !id.includes("..");
}

/**
 * Return `id` (a run, task, session or worker name) or throw a 400 naming which parameter was
 * rejected.
 */
export function requireId(
  kind: "run_id" | "task_id" | "session_id" | "worker",
  id: string,
): string {
  if (!isValidId(id)) {
    throw new InvalidInputError(
      `invalid_${kind}`,
      `${kind} ${JSON.stringify(id.slice(0, 140))} must be ${ID_RULE} (${ID_PATTERN.source})`,
    );
  }
  return id;
}

/** What a role name may be: it names a template directory, so no paths, dots or capitals. */
export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
