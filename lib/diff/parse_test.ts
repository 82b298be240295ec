import assert from "node:assert/strict";
import { parseUnifiedDiff } from "./parse.ts";

Deno.test("parseUnifiedDiff() reads names git quotes, a quote inside one too, and a rename whose new name alone is quoted (table)", () => {
  const cases: [string, string, { path: string; oldPath?: string }][] = [
    [
      "a quote in the name",
      'diff --git "a/quote\\"d.txt" "b/quote\\"d.txt"\nnew file mode 100644\nindex 0000000..1\n' +
      '--- /dev/null\n+++ "b/quote\\"d.txt"\n@@ -0,0 +1 @@\n+q\n',
      { path: 'quote"d.txt' },
    ],
    [
      "only the new name quoted",
      'diff --git a/plain "b/tab\\there"\nsimilarity index 100%\nrename from plain\n' +
      'rename to "tab\\there"\n',
      { path: "tab\there", oldPath: "plain" },
    ],
    [
      "a name ending in a backslash",
      'diff --git "a/end\\\\" "b/end\\\\"\nindex 1..2 100644\n--- "a/end\\\\"\n+++ "b/end\\\\"\n' +
      "@@ -1 +1 @@\n-a\n+b\n",
      { path: "end\\" },
    ],
  ];
  for (const [name, text, want] of cases) {
    const [file] = parseUnifiedDiff(text);
    assert.deepEqual(
      { path: file.path, oldPath: file.oldPath },
      { oldPath: undefined, ...want },
      name,
    );
  }
});
