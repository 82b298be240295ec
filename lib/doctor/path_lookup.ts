/** Find an executable on PATH the way a shell would (bare names only). */
import { delimiter, isAbsolute, join } from "node:path";

/** The full path of `binary` on `pathVar`, or undefined. Absolute paths are checked as given. */
export async function findOnPath(
  binary: string,
  pathVar = Deno.env.get("PATH") ?? "",
): Promise<string | undefined> {
  const candidates = isAbsolute(binary) || binary.includes("/")
    ? [binary]
    : pathVar.split(delimiter).filter(Boolean).map((d) => join(d, binary));
  for (const c of candidates) {
    try {
      const info = await Deno.stat(c);
      if (info.isFile && (info.mode === null || (info.mode & 0o111) !== 0)) return c;
    } catch {
      // not here
    }
  }
  return undefined;
}
