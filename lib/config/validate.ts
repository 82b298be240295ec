/**
 * Validate a parsed YAML document against a zod schema, turning its issues into a
 * {@link ValidationError} with the key path, line, column, and a fix ("did you mean" for
 * unknown keys, an example for missing ones): the first in full, the next few beside it.
 */
import type { z } from "zod";
import { suggest } from "../util/levenshtein.ts";
import { formatPath, ValidationError, type ValidationProblem } from "./errors.ts";
import type { YamlSource } from "./yaml_source.ts";

/** Options of {@link validateYaml}. */
export interface ValidateYamlOptions {
  /** Example YAML for a missing key, by formatted path (`cli`, `roles`, `stages[].steps`). */
  examples?: Record<string, string>;
}

// deno-lint-ignore no-explicit-any
type AnySchema = any;

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (let i = 0; i < 10 && s?._zod?.def; i++) {
    const def = s._zod.def;
    if (["optional", "default", "nullable", "prefault", "readonly", "catch"].includes(def.type)) {
      s = def.innerType;
    } else if (def.type === "pipe") s = def.in;
    else break;
  }
  return s;
}

/**
 * Known keys of the object schema reached by `path` inside `schema` (empty when unknown). A
 * union is searched option by option (`roles` is a mapping or a list; a role is settings or
 * null): the first option that reaches an object there names its keys.
 */
function knownKeysAt(schema: AnySchema, path: readonly PropertyKey[]): string[] {
  const s = unwrap(schema);
  const def = s?._zod?.def;
  if (!def) return [];
  if (def.type === "union") {
    for (const option of def.options) {
      const keys = knownKeysAt(option, path);
      if (keys.length > 0) return keys;
    }
    return [];
  }
  if (path.length === 0) return def.type === "object" ? Object.keys(def.shape) : [];
  const [step, ...rest] = path;
  if (def.type === "object") {
    return Object.hasOwn(def.shape, step) ? knownKeysAt(def.shape[step as string], rest) : [];
  }
  if (def.type === "record") return knownKeysAt(def.valueType, rest);
  if (def.type === "array") return knownKeysAt(def.element, rest);
  return [];
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const step of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[step];
  }
  return v;
}

function genericPath(path: readonly PropertyKey[]): string {
  return formatPath(path.map((p) => (typeof p === "number" ? -1 : p))).replaceAll("[-1]", "[]");
}

/** At most this many further problems are named beside the first. */
const MORE_PROBLEMS = 5;

/**
 * Parse `source.value` with `schema`, or throw a positioned {@link ValidationError}: the first
 * problem with its fix, and the next few named beside it, so a file with several mistakes is
 * not fixed one run at a time.
 */
export function validateYaml<S extends z.ZodType>(
  source: YamlSource,
  schema: S,
  options: ValidateYamlOptions = {},
): z.output<S> {
  const result = schema.safeParse(source.value);
  if (result.success) return result.data;
  const issues = result.error.issues as Issue[];
  const first = misspeltFirst(issues, source.value);
  const problems = [first, ...issues.filter((i) => i !== first)]
    .flatMap((issue) => describeIssue(issue, { source, schema, options, issues }));
  const seen = new Set<string>();
  const distinct = problems.filter((p) => {
    const key = `${p.path}\0${p.problem}`;
    return !seen.has(key) && seen.add(key);
  });
  // A missing key that an unknown key beside it misspells is said once, as the rename.
  const renamed = new Set(distinct.flatMap((p) => p.renames ? [p.renames] : []));
  const [head, ...rest] = distinct.filter((p, i) => i === 0 || !renamed.has(p.path));
  throw new ValidationError(head, rest.slice(0, MORE_PROBLEMS));
}

/** What {@link describeIssue} needs besides the issue. */
interface IssueContext {
  source: YamlSource;
  schema: AnySchema;
  options: ValidateYamlOptions;
  issues: readonly Issue[];
}

/** A problem, and the missing key's path it explains when it is a misspelt key. */
type Described = ValidationProblem & { renames?: string };

/** The problems one zod issue stands for (an issue of unknown keys: one per key). */
function describeIssue(issue: Issue, c: IssueContext): Described[] {
  const { source } = c;
  const path = issue.path as PropertyKey[];
  if (issue.code === "unrecognized_keys") {
    const known = knownKeysAt(c.schema, path);
    return (issue.keys as string[]).map((key) => {
      const guess = suggest(key, known);
      const owner = guess ? undefined : ownerOf(c.schema, path, key);
      return {
        file: source.file,
        path: formatPath([...path, key]),
        position: source.locate([...path, key], { key: true }),
        problem: `unknown key '${key}'${guess ? ` (did you mean '${guess}'?)` : ""}${
          owner ? ` here (it is a key of ${owner})` : ""
        }`,
        fix: guess
          ? `rename '${key}' to '${guess}'`
          : `${owner ? `move '${key}' to ${owner}, or ` : ""}remove '${key}'; known keys here: ${
            known.join(", ") || "(none)"
          }`,
        ...(guess ? { renames: formatPath([...path, guess]) } : {}),
      };
    });
  }
  const input = valueAt(source.value, path);
  if (input === undefined && path.length > 0) return [missingKey(issue, c)];
  let problem = issue.message;
  if (issue.code === "invalid_type") {
    const got = input === null ? "null" : Array.isArray(input) ? "a list" : typeof input;
    problem = `expected ${issue.expected}, got ${got}${
      typeof input === "string" || typeof input === "number" ? ` (${JSON.stringify(input)})` : ""
    }`;
  }
  return [{ file: source.file, path: formatPath(path), position: source.locate(path), problem }];
}

/**
 * The nearest enclosing mapping of `path` whose schema knows `key` (`stages[0]` for a step's
 * `depends_on`: a stage's key written on one of its steps), formatted; undefined when none.
 */
function ownerOf(schema: AnySchema, path: readonly PropertyKey[], key: string): string | undefined {
  for (let end = path.length - 1; end >= 0; end--) {
    const at = path.slice(0, end);
    if (knownKeysAt(schema, at).includes(key)) return formatPath(at) || "the top level";
  }
  return undefined;
}

/** A required key that is not there, with the unknown keys beside it and an example. */
function missingKey(issue: Issue, c: IssueContext): Described {
  const path = issue.path as PropertyKey[];
  const parent = path.slice(0, -1);
  const name = formatPath(path);
  // Keys beside it that the schema does not know: what the user wrote instead.
  const unknown = c.issues
    .filter((i) =>
      i.code === "unrecognized_keys" && JSON.stringify(i.path) === JSON.stringify(parent)
    )
    .flatMap((i) => (i as { keys: string[] }).keys);
  const strangerCount = unknown.length;
  const strangers = unknown.map((k) => `'${k}'`).join(", ");
  const example = c.options.examples?.[genericPath(path)] ??
    `${String(path[path.length - 1])}: <${
      issue.code === "invalid_type" ? issue.expected : "value"
    }>`;
  return {
    file: c.source.file,
    path: name,
    position: c.source.locate(parent, { key: true }),
    problem: `missing required key '${String(path[path.length - 1])}'${
      parent.length ? ` in ${formatPath(parent)}` : " at the top level"
    }${
      strangers ? ` (${strangers} ${strangerCount > 1 ? "are not keys" : "is not a key"} here)` : ""
    }`,
    fix: `${strangers ? `remove ${strangers} and ` : ""}add it, for example:\n${
      example.replace(/^/gm, "    ")
    }`,
  };
}

// deno-lint-ignore no-explicit-any
type Issue = any;

/**
 * The issue to report: the first, unless it is a missing key that an unknown key beside it
 * misspells (`role:` for `roles:`) — then that unknown key, so the fix is to rename it, not to add
 * a second key.
 */
function misspeltFirst(issues: readonly Issue[], value: unknown): Issue {
  const first = issues[0];
  if (first.path.length === 0 || valueAt(value, first.path) !== undefined) return first;
  const parent = JSON.stringify(first.path.slice(0, -1));
  const missing = String(first.path[first.path.length - 1]);
  const typo = issues.find((i) =>
    i.code === "unrecognized_keys" && JSON.stringify(i.path) === parent &&
    i.keys.some((k: string) => suggest(k, [missing]) === missing)
  );
  return typo ?? first;
}
