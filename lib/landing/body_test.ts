/**
 * What an agent or a ticket wrote reaches a pull request's body quoted: rendered by a CommonMark
 * parser (GitLab's Markdown is CommonMark's) with GitHub's extensions (GFM: autolinks, tag
 * filter, tables), each hostile text is one code block whose content is exactly that text, so
 * the host neither notifies a mention, renders HTML or an image, nor hides anything in a comment.
 */
import assert from "node:assert/strict";
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { pullRequestBody, quoteVerbatim } from "./body.ts";

/** The body as GitHub's or GitLab's renderer sees it, raw HTML let through (the hosts filter it
 * afterwards; here any raw HTML that got through shows). */
function render(markdown: string): string {
  return micromark(markdown, {
    allowDangerousHtml: true,
    extensions: [gfm()],
    htmlExtensions: [gfmHtml()],
  });
}

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

const text = (summary: string, goal = "add a feature") =>
  pullRequestBody({ taskId: "t1", runId: "r1", title: "t", goal, summary, passed: [] });

/** Summaries that try to ping, hide, inject or break out of their quote. */
const HOSTILE: [string, string][] = [
  ["mentions", "done @everyone @here @octo-org/maintainers cc @alice"],
  ["an HTML comment hiding text", "looks fine <!-- rm -rf / was added too --> ok"],
  ["a multi-line comment", "fine\n<!--\nthe secret part\n-->\nok"],
  ["raw HTML", '<details><summary>all good</summary>hidden</details>\n<img src="x" onerror="a()">'],
  ["a closing fence", "```\n</code></pre><!-- escaped --> @everyone\n```"],
  ["a longer closing fence", "``````\n@everyone\n``````````"],
  ["a fence after a lone CR", "line\r```\r@everyone <!-- x -->"],
  ["a tilde fence", "~~~\n@everyone\n~~~"],
  [
    "links and images",
    "[click](javascript:alert(1)) ![x](https://evil.example/p.png) https://x.io",
  ],
  ["references", "fixes #1, !2, ~bug, %v1, group/project#3, @user's"],
  ["a table and a heading", "| a | b |\n|---|---|\n| @everyone | x |\n# Heading"],
  ["indentation and spaces", "    indented @everyone\n\ttabbed <b>x</b>"],
  ["inline code spans", "`` `@everyone` `` and `<!--`"],
  ["a NUL and a bidi override", "a\u0000b \u202eevil\u202c"],
];

Deno.test("pullRequestBody() quotes an agent's summary as one code block that nothing inside can end, ping from or hide in", () => {
  for (const [what, summary] of HOSTILE) {
    const body = text(summary);
    const html = render(body);
    const shown = summary.replace(/\r\n?/g, "\n").replaceAll("\u0000", "\ufffd");
    const block = `<h3>What the agent reported</h3>\n<pre><code class="language-text">${
      escapeHtml(shown)
    }\n</code></pre>`;
    assert.ok(html.includes(block), `${what}: not one code block of exactly the summary:\n${html}`);
    // Nothing of the summary is outside the block: no comment, tag or image made it through.
    const rest = html.replace(block, "");
    assert.deepEqual(rest.match(/<!--/g) ?? [], ["<!--"], `${what}: a comment besides the marker`);
    assert.doesNotMatch(rest, /<(img|details|b|a)\b|@everyone|@here|@alice/, `${what}: ${rest}`);
  }
});

Deno.test("pullRequestBody() quotes the goal (a ticket's text) the same way", () => {
  const goal = "Fix it @everyone <!-- and add a backdoor -->";
  const html = render(text("ok", goal));
  assert.ok(
    html.includes(`<pre><code class="language-text">${escapeHtml(goal)}\n</code></pre>`),
    html,
  );
  assert.deepEqual(html.match(/<!--/g), ["<!--"]);
});

Deno.test("quoteVerbatim(): a fence one longer than the longest backtick run inside, at least three", () => {
  const CASES: [string, string][] = [
    ["plain", "```text\nplain\n```"],
    ["a `tick`", "```text\na `tick`\n```"],
    ["``` three", "````text\n``` three\n````"],
    ["x ````````", "`````````text\nx ````````\n`````````"],
    ["\n\nlead and trail  \n\n", "```text\nlead and trail\n```"],
    ["a\r\nb\rc", "```text\na\nb\nc\n```"],
  ];
  for (const [input, expected] of CASES) assert.equal(quoteVerbatim(input), expected);
  const long = quoteVerbatim("x".repeat(7000));
  assert.match(long, /^```text\nx{6000}\n```\n\n_… \(shortened\)_$/);
});

Deno.test("pullRequestBody() keeps a check's name and detail in code spans a backtick cannot end", () => {
  const body = pullRequestBody({
    taskId: "t1",
    runId: "r1",
    title: "t",
    goal: "g",
    passed: [{ kind: "quality_gate", name: "lint`<!--", detail: "deno test `x` <img src=y>" }],
  });
  const html = render(body);
  assert.match(
    html,
    /<li>quality_gate <code>lint`&lt;!--<\/code>: <code>deno test `x` &lt;img src=y&gt;<\/code><\/li>/,
  );
  assert.deepEqual(html.match(/<!--/g), ["<!--"]);
});
