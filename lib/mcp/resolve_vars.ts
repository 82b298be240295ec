/**
 * `${VAR}` references in MCP server definitions, resolved recursively from the environment; an
 * unset variable is an error naming the variable and every key that uses it. Pure.
 */
import { formatPath } from "../config/errors.ts";

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Unset variables referenced by MCP server settings. */
export class McpVariableError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "mcp_unset_variable";
  constructor(readonly unset: { name: string; key: string }[]) {
    super(
      unset.map((u) => `${u.key} references \${${u.name}}, which is not set`).join("; ") +
        `: export ${unset[0].name}=… before starting, or remove the reference`,
    );
    this.name = "McpVariableError";
  }
}

/** Resolve every `${VAR}` inside `value`; `prefix` names where it sits (`mcp_servers`). */
export function resolveVars<T>(
  value: T,
  env: (name: string) => string | undefined,
  prefix: (string | number)[],
): T {
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
  if (unset.length > 0) throw new McpVariableError(unset);
  return out;
}
