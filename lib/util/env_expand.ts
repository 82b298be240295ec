/** `${VAR}` references in configuration values, resolved from the environment at use. */

/** Thrown when referenced variables are unset; names every one of them. */
export class UnsetVariableError extends Error {
  constructor(readonly names: string[], where: string) {
    super(
      `${where} references unset environment variable${names.length > 1 ? "s" : ""} ` +
        `${names.join(", ")}: export ${names[0]}=… before starting, or remove the reference`,
    );
    this.name = "UnsetVariableError";
  }
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Result of {@link expandEnv}: the resolved value and the names that had no value. */
export interface Expanded<T> {
  value: T;
  unset: string[];
}

/**
 * Replace every `${VAR}` in the strings of `value` (recursing into arrays and objects) with the
 * variable's value from `env`. Unset variables are left as written and listed in `unset`.
 */
export function expandEnv<T>(value: T, env: (name: string) => string | undefined): Expanded<T> {
  const unset = new Set<string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      return v.replace(REFERENCE, (whole, name: string) => {
        const found = env(name);
        if (found === undefined) {
          unset.add(name);
          return whole;
        }
        return found;
      });
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return { value: walk(value) as T, unset: [...unset].sort() };
}
