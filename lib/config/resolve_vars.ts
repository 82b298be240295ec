/**
 * `${VAR}` references in MCP server definitions, resolved recursively from the environment; an
 * unset variable is a configuration error naming the variable and every key that uses it. A
 * catalog install resolves only the names its user allowed ({@link resolveAllowedVars}): the
 * catalog's text is literal. Pure.
 */
import { formatPath } from "./errors.ts";
import { UnsetVariableError } from "../util/env_expand.ts";

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Unset variables referenced by MCP server settings, with the keys that reference them. */
export class McpVariableError extends UnsetVariableError {
  /** Machine-readable kind of failure. */
  readonly code = "mcp_unset_variable";
  /** What to do about it. */
  override readonly fix: string;
  constructor(readonly unset: { name: string; key: string }[], where: string) {
    const names = [...new Set(unset.map((u) => u.name))].sort();
    super(names, where);
    this.message = `${where}: ` +
      unset.map((u) => `${u.key} references \${${u.name}}, which is not set`).join("; ") +
      ` (unset: ${names.join(", ")})`;
    this.fix = `export ${names[0]}=… before starting, or remove the reference from ${where}`;
    this.name = "ConfigError";
  }
}

/** Where {@link resolveVars} looks names up, and where the value comes from (for the error). */
export interface ResolveVarsOptions {
  /** The environment: a name's value, or undefined when it is not set. */
  env: (name: string) => string | undefined;
  /** The value's key path in its file (`["mcp_servers"]`). */
  prefix: (string | number)[];
  /** The file it comes from. */
  file: string;
}

/** Resolve every `${VAR}` inside `value`; an unset one is a {@link McpVariableError}. */
export function resolveVars<T>(value: T, { env, prefix, file }: ResolveVarsOptions): T {
  const unset: { name: string; key: string }[] = [];
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (typeof v === "string") {
      return v.replace(REFERENCE, (whole, name: string) => {
        const found = env(name);
        if (found !== undefined) return found;
        unset.push({ name, key: formatPath(path) });
        return whole;
      });
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k])]));
    }
    return v;
  };
  const out = walk(value, prefix) as T;
  if (unset.length > 0) throw new McpVariableError(unset, file);
  return out;
}

/** The variable names `${NAME}` references anywhere inside `value`, sorted, each once. */
export function referencedNames(value: unknown): string[] {
  const names = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") { for (const m of v.matchAll(REFERENCE)) names.add(m[1]); }
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return [...names].sort();
}

/**
 * Resolve only the references whose names are in `allowed` (a catalog install: the names its
 * user allowed at install); every other `${NAME}` stays as written, never looked up.
 */
export function resolveAllowedVars<T>(
  value: T,
  allowed: readonly string[],
  options: ResolveVarsOptions,
): T {
  const names = new Set(allowed);
  return resolveVars(value, {
    ...options,
    env: (name) => names.has(name) ? options.env(name) : `\${${name}}`,
  });
}
