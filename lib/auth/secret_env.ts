/**
 * Secrets from the environment, or from a file the environment names: `NAME`, else the contents
 * of the file `NAME_FILE` names (a mounted Kubernetes Secret, a Docker secret), trimmed. The file
 * is read again whenever it changes (its inode, size or mtime: a Secret's update swaps the file
 * under its symlink), so a rotated token is taken without a restart, as a changed variable is
 * where variables can change.
 */

interface Cached {
  ino: number | null;
  size: number;
  mtime: number | undefined;
  value: string | undefined;
}

const files = new Map<string, Cached>();

/** Why `path` could not be read, or undefined when it can (a start-up check's words). */
export function secretFileProblem(path: string): string | undefined {
  try {
    Deno.readTextFileSync(path);
    return undefined;
  } catch (e) {
    return `cannot read ${path}: ${(e as Error).message}`;
  }
}

/** The trimmed contents of `path` (undefined when unreadable or empty), read again on change. */
export function readSecretFile(path: string): string | undefined {
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(path);
  } catch {
    files.delete(path);
    return undefined;
  }
  const seen = files.get(path);
  const mtime = st.mtime?.getTime();
  if (seen && seen.ino === st.ino && seen.size === st.size && seen.mtime === mtime) {
    return seen.value;
  }
  let value: string | undefined;
  try {
    value = Deno.readTextFileSync(path).trim() || undefined;
  } catch {
    value = undefined;
  }
  files.set(path, { ino: st.ino, size: st.size, mtime, value });
  return value;
}

/** The secret `name`: its variable, else the file its `name_FILE` variable names. */
export function secretEnv(
  name: string,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): string | undefined {
  const direct = env(name);
  if (direct) return direct;
  const path = env(`${name}_FILE`);
  return path ? readSecretFile(path) : undefined;
}
