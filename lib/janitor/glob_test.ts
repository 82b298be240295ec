import assert from "node:assert/strict";
import { fuzzyPattern, hasGlobChars, matchGlob } from "./glob.ts";

const cases: [pattern: string, path: string, expected: boolean][] = [
  ["src/a.ts", "src/a.ts", true],
  ["src/a.ts", "src/a.tsx", false],
  ["src/*.ts", "src/a.ts", true],
  ["src/*.ts", "src/deep/a.ts", false],
  ["src/*.ts", "src/.hidden.ts", true],
  ["*.ts", "a.ts", true],
  ["*.ts", "dir/a.ts", false],
  ["**/*.ts", "a.ts", true],
  ["**/*.ts", "a/b/c.ts", true],
  ["**/*.ts", "a/b/c.js", false],
  ["src/**/test_*.py", "src/test_a.py", true],
  ["src/**/test_*.py", "src/x/y/test_a.py", true],
  ["src/**/test_*.py", "lib/test_a.py", false],
  ["src/**", "src/a/b", true],
  ["src/**", "srcx/a", false],
  ["**", "anything/at/all", true],
  ["a?c", "abc", true],
  ["a?c", "a/c", false],
  ["a?c", "ac", false],
  ["file[0-9].txt", "file7.txt", true],
  ["file[0-9].txt", "filex.txt", false],
  ["file[!0-9].txt", "filex.txt", true],
  ["file[!0-9].txt", "file7.txt", false],
  ["file[^ab].txt", "filec.txt", true],
  ["a[/]b", "a/b", false],
  ["x[.txt", "x[.txt", true],
  ["a\\*b", "a*b", true],
  ["a\\*b", "axb", false],
  ["a.b", "axb", false],
  ["(x)+", "(x)+", true],
  ["./docs/*.md", "docs/a.md", true],
  ["**/helpers*.py", "helpers.py", true],
  ["**/helpers*.py", "lib/helpers_v2.py", true],
  ["**/helpers*.py", "lib/helpers.pyc", false],
];

Deno.test("matchGlob() table", () => {
  for (const [pattern, path, expected] of cases) {
    assert.equal(matchGlob(pattern, path), expected, `${pattern} vs ${path}`);
  }
});

Deno.test("hasGlobChars() recognises *, ? and [", () => {
  assert.deepEqual(
    ["a/b.ts", "a/*.ts", "a?.ts", "a[0].ts", "a{b}.ts"].map(hasGlobChars),
    [false, true, true, true, false],
  );
});

Deno.test("fuzzyPattern() derives **/<stem>*<suffix> from the basename", () => {
  const table: [string, string][] = [
    ["src/utils/helpers.py", "**/helpers*.py"],
    ["tests/test_api.test.ts", "**/test_api.test*.ts"],
    ["Makefile", "**/Makefile*"],
    [".env", "**/.env*"],
    ["docs/", "**/docs*"],
  ];
  for (const [literal, pattern] of table) assert.equal(fuzzyPattern(literal), pattern, literal);
});
