import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { positivePatterns, trimTrailingSpaces } from "./exclude_lines.ts";
import { ignoredListingCounts, keepOutOfIndex } from "./keep_out.ts";
import { exactIgnoreLine, writeWorktreeIgnores } from "./ignores.ts";
import { openWorktree } from "./trees.ts";
import { createWorktree } from "./worktrees.ts";

/** Files an agent forced into its index, and the `.gitignore`s it wrote (some negating). */
const FORCED: Record<string, string> = {
  ".env": "SECRET=1\n",
  "a b ": "trailing space\n",
  "a b": "no trailing space\n",
  "cfg/a[1]*.json": "{}\n",
  "cfg/a1x.json": "{}\n",
  "build/out.bin": "x\n",
  "build/keep.txt": "x\n",
  "x.log": "x\n",
  "deep/x.log": "x\n",
  "notes.tmp": "x\n",
  "#hash": "x\n",
  "app.py": "print(1)\n",
  ".gitignore": "!.env\n!build/\n!*.log\n*.tmp\n",
  "deep/.gitignore": "!x.log\n",
};

/**
 * The service's exclude lines, with what git does to a file's lines: comments, an empty line, a
 * carriage return, escaped and unescaped trailing spaces, escaped glob characters, a directory.
 */
const LINES = [
  exactIgnoreLine(".env"),
  exactIgnoreLine("a b "),
  exactIgnoreLine("cfg/a[1]*.json"),
  "# a comment\r",
  "",
  "build/   ",
  "*.log\r",
  "\\#hash",
];

/** What the two `ls-files` processes of before found: the file's lines alone, then the standard rules. */
async function twoProcessAnswer(repo: TestRepo, worktree: string, file: string) {
  const found = new Set<string>();
  for (const rule of [`--exclude-from=${file}`, "--exclude-standard"]) {
    const out = await repo.git(["ls-files", "-z", "-c", "-i", rule], worktree);
    for (const p of out.split("\0")) if (p) found.add(p);
  }
  return found;
}

async function agentTree(repo: TestRepo, session: string, lines: string[]) {
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, session, base);
  const file = (await writeWorktreeIgnores(wt.path, lines))!;
  for (const [path, text] of Object.entries(FORCED)) await repo.write(path, text, wt.path);
  await repo.git(["add", "-f", "-A"], wt.path);
  return { base, wt, file };
}

Deno.test("keepOutOfIndex() lists what the service's exclude file or the user's rules match in one ls-files, exactly as the file alone and the standard rules did in two — an agent's negating .gitignore changes neither", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const { base, wt, file } = await agentTree(repo, "s1", LINES);
  const expected = await twoProcessAnswer(repo, wt.path, file);
  assert.deepEqual([...expected].sort(), [
    "#hash",
    ".env",
    "a b ",
    "build/keep.txt",
    "build/out.bin",
    "cfg/a[1]*.json",
    "deep/x.log",
    "notes.tmp",
    "x.log",
  ]);
  const before = ignoredListingCounts.processes;
  const left = await keepOutOfIndex(await openWorktree(wt.path), base);
  assert.equal(ignoredListingCounts.processes, before + 1);
  assert.deepEqual(left, [...expected].sort());
  assert.ok(!left.includes("app.py") && !left.includes("a b") && !left.includes("cfg/a1x.json"));
});

Deno.test("keepOutOfIndex() with a negation in the service's exclude file (the user's global excludes copied in) asks the file alone and the standard rules apart, as before", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const { base, wt, file } = await agentTree(repo, "s1", [...LINES, "!build/keep.txt"]);
  const expected = await twoProcessAnswer(repo, wt.path, file);
  const before = ignoredListingCounts.processes;
  const left = await keepOutOfIndex(await openWorktree(wt.path), base);
  assert.equal(ignoredListingCounts.processes, before + 2);
  assert.deepEqual(left, [...expected].sort());
  // A file the agent replaced by a link is not the service's (as before): the standard rules only.
  const link = join(repo.root, "elsewhere-exclude");
  await Deno.writeTextFile(link, await Deno.readTextFile(file));
  await Deno.remove(file);
  await Deno.symlink(link, file);
  const linked = ignoredListingCounts.processes;
  await keepOutOfIndex(await openWorktree(wt.path), base);
  assert.equal(ignoredListingCounts.processes, linked + 1);
});

Deno.test("positivePatterns() reads an exclude file's lines as git does, and refuses what a command line cannot say the same way (table)", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  const cases: [string, Uint8Array, string[] | undefined][] = [
    ["comments and empty lines skipped", bytes("# c\n\n/a\n"), ["/a"]],
    ["a last line without newline", bytes("/a\n/b"), ["/a", "/b"]],
    ["a carriage return dropped", bytes("/a\r\n"), ["/a"]],
    ["a lone carriage return is an empty pattern", bytes("\r\n"), [""]],
    ["a byte-order mark skipped", bytes("\uFEFF# c\n/a\n"), ["/a"]],
    ["trailing spaces trimmed, an escaped one kept", bytes("a  \nb\\ \n"), ["a", "b\\ "]],
    ["a comment after spaces is a pattern", bytes(" #x\n"), [" #x"]],
    ["an escaped ! is literal", bytes("\\!x\n"), ["\\!x"]],
    ["a negation", bytes("/a\n!b\n"), undefined],
    ["a NUL byte", bytes("/a\0b\n"), undefined],
    ["not UTF-8", new Uint8Array([0x2f, 0xff, 0x0a]), undefined],
    ["too long", bytes("a".repeat(70_000) + "\n"), undefined],
  ];
  for (const [name, input, want] of cases) assert.deepEqual(positivePatterns(input), want, name);
  assert.equal(trimTrailingSpaces("x\\"), "x\\");
  assert.equal(trimTrailingSpaces("x \\  "), "x \\ ");
});
