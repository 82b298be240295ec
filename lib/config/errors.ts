/** Configuration and plan errors that name the file, the key path, the position and a fix. */
import type { Position } from "./yaml_source.ts";

/** What a {@link ValidationError} names: where the problem is, what it is, how to fix it. */
export interface ValidationProblem {
  file: string;
  /** The key path (`stages[1].role`); empty for the whole file. */
  path: string;
  position: Position;
  problem: string;
  fix?: string;
}

/** A problem in a YAML input (spec §7.3 "ValidationError on startup"). */
export class ValidationError extends Error {
  readonly file: string;
  readonly path: string;
  readonly position: Position;
  readonly problem: string;
  readonly fix?: string;

  /** Further problems of the same file, named beside this one (their fixes in `also`). */
  readonly also: readonly ValidationProblem[];

  constructor(
    { file, path, position, problem, fix }: ValidationProblem,
    also: readonly ValidationProblem[] = [],
  ) {
    super(
      `${file}:${position.line}:${position.col}: ${path ? `${path}: ` : ""}${problem}` +
        (fix ? `\n  fix: ${fix}` : "") +
        also.map((p) =>
          `\n  also ${p.position.line}:${p.position.col}: ${
            p.path ? `${p.path}: ` : ""
          }${p.problem}`
        ).join(""),
    );
    this.also = also;
    this.name = "ValidationError";
    this.file = file;
    this.path = path;
    this.position = position;
    this.problem = problem;
    this.fix = fix;
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
