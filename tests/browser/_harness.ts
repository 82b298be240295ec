/**
 * Browser test harness: a temporary workspace holding the golden run, the real server on a
 * free port, and the tests' Chromium (../_chromium.ts) driven by playwright-core. Everything is
 * closed on dispose.
 */
import type { BrowserContext, Page } from "playwright-core";
import { join } from "node:path";
import { serveBoard } from "../_e2e.ts";
import { launchChromiumContext } from "../_chromium.ts";
import type { TokenSpec } from "../../lib/auth/tokens.ts";

/** Where screenshots go (gitignored). */
export const ARTIFACTS = new URL("../artifacts/", import.meta.url);
/** The golden run directory of the shared examples. */
import { GOLDEN_DIR } from "../helpers.ts";
/** The golden run (the vendored copy of ../shared/examples/run-golden). */
export const GOLDEN = GOLDEN_DIR;

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyDir(join(from, entry.name), join(to, entry.name));
    else await Deno.copyFile(join(from, entry.name), join(to, entry.name));
  }
}

/** A running board: workspace, server, browser. */
export interface BoardHarness extends AsyncDisposable {
  root: string;
  url: string;
  page: Page;
  context: BrowserContext;
  /** `.sdd/runs/<run>` of the workspace. */
  runDir(runId: string): string;
}

/** Options of {@link openBoard}. */
export interface OpenBoardOptions {
  tokens?: TokenSpec[];
  /** Prepare the workspace before the server starts. */
  prepare?: (root: string) => Promise<void>;
  viewport?: { width: number; height: number };
}

/** Start everything; dispose with `await using`. */
export async function openBoard(options: OpenBoardOptions = {}): Promise<BoardHarness> {
  const root = await Deno.makeTempDir({ prefix: "board-ws-" });
  const profile = await Deno.makeTempDir({ prefix: "board-chromium-" });
  const runDir = (runId: string) => join(root, ".sdd", "runs", runId);
  await copyDir(GOLDEN, runDir("golden"));
  for (const name of ["README.md", "board.canonical.json", "expected.json"]) {
    await Deno.remove(join(runDir("golden"), name)).catch(() => {});
  }
  await options.prepare?.(root);
  const server = await serveBoard(root, options.tokens ?? []);
  const rest = async () => {
    await server[Symbol.asyncDispose]();
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    await Deno.remove(root, { recursive: true }).catch(() => {});
  };
  let context: BrowserContext;
  try {
    context = await launchChromiumContext(profile, {
      viewport: options.viewport ?? { width: 1400, height: 1000 },
    });
  } catch (e) {
    await rest(); // a browser that does not start leaves nothing behind
    throw e;
  }
  const page = context.pages()[0] ?? await context.newPage();
  return {
    root,
    url: server.url,
    page,
    context,
    runDir,
    async [Symbol.asyncDispose]() {
      await context.close();
      await rest();
    },
  };
}

/** Save a screenshot (full page unless `fullPage` is false) under tests/artifacts/. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage });
}
