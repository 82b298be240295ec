/**
 * Which Chromium the browser tests drive, in order: `SERVICE_TEST_CHROMIUM` (a path), a system
 * Chromium or Chrome on PATH, then the build shipped inside `npm:@sparticuz/chromium` (unpacked
 * to the temp directory on first use, ~2 s). The tests never skip for want of a browser: with
 * none of these they fail, naming the fix.
 */
import { delimiter, join } from "node:path";

const SYSTEM_BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

let found: Promise<string> | undefined;

/** The Chromium executable for this test process (looked up once). */
export function chromiumExecutable(): Promise<string> {
  return found ??= findChromium((name) => Deno.env.get(name));
}

/** Look a Chromium up in the documented order, reading variables through `env`. */
export async function findChromium(env: (name: string) => string | undefined): Promise<string> {
  const chosen = env("SERVICE_TEST_CHROMIUM");
  if (chosen) {
    if (await isExecutable(chosen)) return chosen;
    throw new Error(
      `SERVICE_TEST_CHROMIUM=${chosen} is not an executable file: point it at a Chromium or unset it`,
    );
  }
  for (const name of SYSTEM_BROWSERS) {
    const path = await onPath(name, env("PATH") ?? "");
    if (path) return path;
  }
  try {
    const { default: shipped } = await import("@sparticuz/chromium");
    return await shipped.executablePath();
  } catch (e) {
    throw new Error(
      "no Chromium for the browser tests: install one (apt-get install chromium), set " +
        `SERVICE_TEST_CHROMIUM, or let npm:@sparticuz/chromium unpack (it failed: ${
          (e as Error).message
        })`,
    );
  }
}

async function onPath(name: string, pathVariable: string): Promise<string | undefined> {
  for (const dir of pathVariable.split(delimiter)) {
    if (dir && await isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}
