import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { DiffFileToggle, DiffHeader, DiffLines, NoDiffCaptured, rowCount } from "./diff_view.tsx";
import { parseUnifiedDiff } from "../../lib/diff/parse.ts";

const header = { sha256: "sha256:" + "0".repeat(64), added: 2, removed: 1, files: ["a.ts"] };

const DIFF = `diff --git a/a.ts b/a.ts
--- a/a.ts
+++ b/a.ts
@@ -10,3 +10,4 @@ fn
 keep
-old
+new
+more
diff --git a/logo.png b/logo.png
Binary files a/logo.png and b/logo.png differ
diff --git a/old name.ts b/new name.ts
similarity index 100%
rename from old name.ts
rename to new name.ts
`;

Deno.test("DiffHeader shows a DIFF UNVERIFIED badge when the diff does not verify", () => {
  const html = renderToString(<DiffHeader diff={{ ...header, verified: false }} />);
  assert.match(html, /DIFF UNVERIFIED/);
});

Deno.test("DiffHeader shows no DIFF UNVERIFIED badge for a verified diff", () => {
  const html = renderToString(<DiffHeader diff={{ ...header, verified: true }} />);
  assert.doesNotMatch(html, /UNVERIFIED/);
  assert.match(html, /diff verified/);
});

Deno.test("NoDiffCaptured says 'no diff captured'", () => {
  assert.match(renderToString(<NoDiffCaptured />), />no diff captured</);
});

Deno.test("DiffFileToggle summarises a file: path, added, removed, hunk count, collapsed", () => {
  const [file] = parseUnifiedDiff(DIFF);
  const html = renderToString(<DiffFileToggle file={file} expanded={false} controls="x" />);
  assert.match(html, /aria-expanded="false"/);
  assert.match(html, />a\.ts</);
  assert.match(html, /\+2<\/span><span class="minus">−1/);
  assert.match(html, /1 hunk/);
});

Deno.test("DiffFileToggle shows binary files and renames sensibly", () => {
  const [, binary, renamed] = parseUnifiedDiff(DIFF);
  assert.match(
    renderToString(<DiffFileToggle file={binary} expanded={false} controls="x" />),
    /binary file/,
  );
  const html = renderToString(<DiffFileToggle file={renamed} expanded controls="x" />);
  assert.match(html, /old name\.ts → new name\.ts/);
  assert.match(html, /renamed/);
  assert.match(renderToString(<DiffLines file={binary} />), /Binary file: contents not shown/);
});

Deno.test("DiffLines numbers old and new lines and classes them by kind", () => {
  const [file] = parseUnifiedDiff(DIFF);
  const html = renderToString(<DiffLines file={file} />);
  assert.match(html, /<div class="l ctx" data-old="10" data-new="10" data-ln=" {4}10 {4}10"> keep/);
  assert.match(html, /<div class="l del" data-old="11" data-ln=" {4}11 {6}">-old/);
  assert.match(html, /<div class="l add" data-new="12" data-ln=" {10}12">\+more/);
  assert.equal(rowCount(file), 5);
});

Deno.test("DiffLines renders no more rows than its limit", () => {
  const [file] = parseUnifiedDiff(DIFF);
  const html = renderToString(<DiffLines file={file} limit={2} />);
  assert.equal((html.match(/class="l /g) ?? []).length, 2);
});
