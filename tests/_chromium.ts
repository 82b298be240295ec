/**
 * The one way every browser test finds and starts its Chromium. In order:
 *
 * 1. `SERVICE_TEST_CHROMIUM`: a path to a Chromium or Chrome, or the word `npm` for the build
 *    inside `npm:@sparticuz/chromium` — what a machine with no browser gets, even where one is
 *    installed (CI runs the suite so);
 * 2. a system Chromium or Chrome on `PATH` (`chromium`, `chromium-browser`, `google-chrome`,
 *    `google-chrome-stable`);
 * 3. the npm build, unpacked once per machine (~3 s) into a directory of its own under the temp
 *    directory, named by the package's version and the user, and renamed into place only when
 *    whole: test files starting together on a fresh machine wait for one unpack (a lock) and
 *    never run a half-written binary. Its fonts come with it (a fontconfig file of its own), so
 *    pages have text on a machine without fonts.
 *
 * The npm build is a headless shell compiled without the headless commands (`--dump-dom`,
 * `--screenshot`, `--print-to-pdf` are not in the binary: given one, it opens the page and waits
 * forever); {@link TestChromium.headlessCommands} says so, and a test of those commands captures
 * over the DevTools protocol instead. The tests never skip for want of a browser: with none of
 * these they fail, naming the fix.
 */
import { delimiter, dirname, join } from "node:path";
import { type Browser, type BrowserContext, chromium } from "playwright-core";

/** Where the browser was found. */
export type ChromiumSource = "SERVICE_TEST_CHROMIUM" | "PATH" | "npm";

/** The browser the tests drive. */
export interface TestChromium {
  executable: string;
  source: ChromiumSource;
  /** Whether `--headless --dump-dom` / `--screenshot` work (not in the npm headless shell). */
  headlessCommands: boolean;
  /** Variables to start it with, beyond this process's (the npm build's fontconfig file). */
  env: Record<string, string>;
}

/** Flags for a Chromium run as root in a container, without background traffic. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const SYSTEM_BROWSERS = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

const ROOT = join(import.meta.dirname!, "..");

let found: Promise<TestChromium> | undefined;

/** The Chromium of this test process (looked up once). */
export function testChromium(): Promise<TestChromium> {
  return found ??= findChromium((name) => Deno.env.get(name));
}

/** Look a Chromium up in the documented order, reading variables through `env`. */
export async function findChromium(
  env: (name: string) => string | undefined,
): Promise<TestChromium> {
  const chosen = env("SERVICE_TEST_CHROMIUM");
  if (chosen === "npm") return await npmChromium(env);
  if (chosen) {
    if (await isExecutable(chosen)) return system(chosen, "SERVICE_TEST_CHROMIUM");
    throw new Error(
      `SERVICE_TEST_CHROMIUM=${chosen} is not an executable file: point it at a Chromium, ` +
        "set it to npm for the build inside npm:@sparticuz/chromium, or unset it",
    );
  }
  for (const name of SYSTEM_BROWSERS) {
    const path = await onPath(name, env("PATH") ?? "");
    if (path) return system(path, "PATH");
  }
  return await npmChromium(env);
}

function system(executable: string, source: ChromiumSource): TestChromium {
  return { executable, source, headlessCommands: true, env: {} };
}

/** Headless Chromium, started the one way (close it when done). */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const c = await testChromium();
  return await chromium.launch({
    executablePath: c.executable,
    headless: true,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    ...launchEnv(c),
  });
}

/** Headless Chromium with a persistent profile in `profile` (close the context when done). */
export async function launchChromiumContext(
  profile: string,
  options: { args?: string[]; viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  const c = await testChromium();
  return await chromium.launchPersistentContext(profile, {
    executablePath: c.executable,
    headless: true,
    args: [...CHROMIUM_ARGS, ...options.args ?? []],
    ...(options.viewport ? { viewport: options.viewport } : {}),
    ...launchEnv(c),
  });
}

function launchEnv(c: TestChromium): { env?: Record<string, string> } {
  return Object.keys(c.env).length === 0 ? {} : { env: { ...Deno.env.toObject(), ...c.env } };
}

/** The pinned version of `npm:@sparticuz/chromium` (deno.json's import). */
async function npmVersion(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const spec = String(config.imports?.["@sparticuz/chromium"] ?? "");
  const version = /@(\d[\w.-]*)$/.exec(spec)?.[1];
  if (!version) throw new Error(`deno.json imports no pinned @sparticuz/chromium (${spec})`);
  return version;
}

/** The npm build, unpacked into its own directory once per machine and user. */
async function npmChromium(env: (name: string) => string | undefined): Promise<TestChromium> {
  const dir = join(
    env("TMPDIR") || "/tmp",
    `service-test-chromium-${await npmVersion()}-${Deno.uid() ?? "user"}`,
  );
  const done: TestChromium = {
    executable: join(dir, "chromium"),
    source: "npm",
    headlessCommands: false,
    env: { FONTCONFIG_FILE: join(dir, "fonts.conf") },
  };
  if (await isExecutable(done.executable)) return done;
  await using lock = await Deno.open(`${dir}.lock`, { create: true, write: true });
  await lock.lock(true);
  if (await isExecutable(done.executable)) return done; // another test file unpacked it
  const staging = await Deno.makeTempDir({ dir: dirname(dir), prefix: "service-test-chromium-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--quiet",
        "--config",
        join(ROOT, "deno.json"),
        'const { default: c } = await import("@sparticuz/chromium"); await c.executablePath();',
      ],
      cwd: ROOT,
      env: { TMPDIR: staging }, // where the package unpacks
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(180_000),
    }).output();
    if (!out.success || !(await isExecutable(join(staging, "chromium")))) {
      throw new Error(new TextDecoder().decode(out.stderr).trim() || `exit ${out.code}`);
    }
    await Deno.writeTextFile(join(staging, "fonts.conf"), fontsConf(dir));
    await Deno.remove(dir, { recursive: true }).catch(() => {}); // a partial copy of old
    await Deno.rename(staging, dir);
    return done;
  } catch (e) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw new Error(
      "no Chromium for the browser tests: install one (apt-get install chromium), set " +
        "SERVICE_TEST_CHROMIUM to its path, or let npm:@sparticuz/chromium unpack (run " +
        `\`deno install\` first; unpacking into ${dir} failed: ${(e as Error).message})`,
    );
  }
}

/** Fontconfig for the npm build: its bundled fonts (under `dir`), then the system's. */
function fontsConf(dir: string): string {
  return [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
    "<fontconfig>",
    `  <dir>${join(dir, "fonts")}</dir>`,
    "  <dir>/usr/share/fonts</dir>",
    "  <dir>/usr/local/share/fonts</dir>",
    `  <cachedir>${join(dir, "fonts-cache")}</cachedir>`,
    "</fontconfig>",
    "",
  ].join("\n");
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
