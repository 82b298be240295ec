/** Configuration and plan errors that name the file, the key path, the position and a fix. */
import type { Position } from "./yaml_source.ts";

/** A problem in a YAML input (spec §7.3 "ValidationError on startup"). */
export class ValidationError extends Error {
  constructor(
    readonly file: string,
    readonly path: string,
    readonly position: Position,
    readonly problem: string,
    readonly fix?: string,
  ) {
    super(
      `${file}:${position.line}:${position.col}: ${path ? `${path}: ` : ""}${problem}` +
        (fix ? `\n  fix: ${fix}` : ""),
    );
    this.name = "ValidationError";
  }
}

/** Render a zod-style path (`["stages", 1, "steps", 0, "role"]`) as `stages[1].steps[0].role`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const step of path) {
    if (typeof step === "number") out += `[${step}]`;
    else out += out ? `.${String(step)}` : String(step);
  }
  return out;
}
