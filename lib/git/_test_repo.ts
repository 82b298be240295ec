/** Test helper: a real git repository in a temporary directory, removed on dispose. */
import { dirname, join } from "node:path";
import { git, gitText } from "./git.ts";

/** A throw-away repository with a `main` branch and one commit. */
export interface TestRepo extends AsyncDisposable {
  /** Repository root (realpath). */
  root: string;
  /** Run git in the root (or `cwd`), returning trimmed stdout. */
  git(args: string[], cwd?: string): Promise<string>;
  /** Write a file relative to the root (or `cwd`), creating directories. */
  write(path: string, content: string, cwd?: string): Promise<void>;
  /** Read a file relative to the root (or `cwd`). */
  read(path: string, cwd?: string): Promise<string>;
  /** Stage everything and commit in the root (or `cwd`); returns the new commit. */
  commitAll(message: string, cwd?: string): Promise<string>;
}

/** Create a repository holding `files` (default one README) committed on `main`. */
export async function tempRepo(
  files: Record<string, string> = { "README.md": "hello\n" },
): Promise<TestRepo> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "svc-git-" }));
  const run = (args: string[], cwd = root) => gitText(args, { cwd });
  const write = async (path: string, content: string, cwd = root) => {
    await Deno.mkdir(dirname(join(cwd, path)), { recursive: true });
    await Deno.writeTextFile(join(cwd, path), content);
  };
  await git(["init", "-q", "-b", "main"], { cwd: root });
  await run(["config", "user.name", "Test User"]);
  await run(["config", "user.email", "test@example.com"]);
  await run(["config", "commit.gpgsign", "false"]);
  for (const [path, content] of Object.entries(files)) await write(path, content);
  const commitAll = async (message: string, cwd = root) => {
    await run(["add", "-A"], cwd);
    await run(["commit", "-q", "--allow-empty", "-m", message], cwd);
    return await run(["rev-parse", "HEAD"], cwd);
  };
  await commitAll("initial");
  return {
    root,
    git: run,
    write,
    read: (path, cwd = root) => Deno.readTextFile(join(cwd, path)),
    commitAll,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}
