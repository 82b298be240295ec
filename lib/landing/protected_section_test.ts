import assert from "node:assert/strict";
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { pullRequestBody } from "./body.ts";
import { protectedSection } from "./protected_section.ts";

function render(markdown: string): string {
  return micromark(markdown, {
    allowDangerousHtml: true,
    extensions: [gfm()],
    htmlExtensions: [gfmHtml()],
  });
}

Deno.test("pullRequestBody() names each protected path in a section of its own; none: no section", () => {
  const body = (protectedPaths?: string[]) =>
    pullRequestBody({
      taskId: "t1",
      runId: "r1",
      title: "t",
      goal: "g",
      passed: [],
      protectedPaths,
    });
  assert.doesNotMatch(body(), /Protected paths/);
  assert.doesNotMatch(body([]), /Protected paths/);
  const text = body(["service.yaml", ".github/workflows/ci.yml"]);
  assert.match(
    text,
    /### Protected paths\n\n.*merges only after an operator's merge decision on the review board:\n\n- `service\.yaml`\n- `\.github\/workflows\/ci\.yml`\n/,
  );
});

Deno.test("protectedSection() shows a hostile file name as code: no ping, tag, comment or line break escapes it", () => {
  const HOSTILE = [
    "@everyone.yml",
    ".github/workflows/<img src=x onerror=a()>.yml",
    "CODEOWNERS<!-- hidden -->",
    "a`b``c.yml",
    "line\nbreak\r\n# Heading.yml",
    "\u202eevil.yml",
  ];
  const html = render(protectedSection(HOSTILE).join("\n"));
  const items = [...html.matchAll(/<li>(.*?)<\/li>/gs)].map((m) => m[1]);
  assert.equal(items.length, HOSTILE.length, html);
  for (const item of items) assert.match(item, /^<code>[^<]*<\/code>$/, `one code span: ${item}`);
  const outside = html.replace(/<code>[^<]*<\/code>/g, "");
  assert.doesNotMatch(outside, /<img|<!--|@everyone|<h1/, outside);
});

Deno.test("protectedSection() lists the first 50 paths, then how many more", () => {
  const paths = Array.from({ length: 53 }, (_, i) => `.sdd/f${i}`);
  const lines = protectedSection(paths);
  assert.equal(lines.filter((l) => l.startsWith("- `")).length, 50);
  assert.equal(lines.at(-1), "- … and 3 more");
});

Deno.test("pullRequestBody() names each file over max_landed_file_mb with its size and the limit; none: no section", () => {
  const body = (oversized?: { files: { path: string; bytes: number }[]; limitBytes: number }) =>
    pullRequestBody({ taskId: "t1", runId: "r1", title: "t", goal: "g", passed: [], oversized });
  assert.doesNotMatch(body(), /size limit/);
  assert.doesNotMatch(body({ files: [], limitBytes: 10 }), /size limit/);
  const text = body({
    files: [{ path: "data/dump.sql", bytes: 62_914_560 }, { path: "@everyone`.bin", bytes: 11e6 }],
    limitBytes: 10_485_760,
  });
  assert.match(
    text,
    /### Files over the size limit\n\nThis change adds or grows files over `max_landed_file_mb` \(10\.0 MB\); it merges only after an operator's merge decision on the review board:\n\n- `data\/dump\.sql`: 60\.0 MB\n- `@everyone\\u0060\.bin`: 10\.5 MB\n/,
  );
});
