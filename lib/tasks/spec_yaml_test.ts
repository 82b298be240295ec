import { deepEqual as assertEquals } from "node:assert/strict";
import { parse, stringify } from "yaml";
import { specYaml } from "./spec_yaml.ts";
import { newTask, TaskInputSchema } from "./task.ts";

const HOSTILE_STRINGS = [
  "",
  " ",
  "plain words",
  "true",
  "False",
  "NULL",
  "~",
  "yes",
  "0",
  "-1",
  "0x1f",
  "1e3",
  ".inf",
  ".NaN",
  "12:30",
  "2026-11-20T10:00:00.000Z",
  "key: value",
  "ends with colon:",
  "trailing space ",
  " leading space",
  "# comment",
  "a #b",
  "- item",
  "? question",
  "[flow]",
  "{flow}",
  "&anchor",
  "*alias",
  "!tag",
  "|",
  ">",
  "%directive",
  "@at",
  "`tick`",
  "'single'",
  '"double"',
  "back\\slash",
  "tab\there",
  "line\nbreak",
  "line\n",
  "line\n\n",
  "\nstarts with a break",
  "  indented\nsecond",
  "first\n  indented second\n",
  "first\n\n\nthird",
  "first\n   \nspaces only line",
  "crlf\r\nline",
  "lone \r",
  "---\n...\n--- x",
  "x\n---\n...",
  "nul \u0000 bell \u0007 esc \u001b del \u007f",
  "c1 \u0080 \u0085 \u009f",
  "bom \ufeff nbsp \u00a0",
  "ls \u2028 ps \u2029",
  "non-char \ufffe \uffff",
  "lone high \ud800 end",
  "lone low \udc00 end",
  "ends with high \ud83d",
  "emoji 🚀 and 中文 and é",
  "multi\nline 🚀\nemoji",
  "Steps to reproduce\n".repeat(40),
];

/** A random string over characters that stress YAML's scalars. */
function randomString(random: () => number): string {
  const alphabet = [
    "a",
    "Z",
    "_",
    "0",
    "9",
    " ",
    "\t",
    "\n",
    "\r",
    ":",
    "#",
    "-",
    "?",
    "'",
    '"',
    "\\",
    "|",
    ">",
    "!",
    "&",
    "*",
    "[",
    "]",
    "{",
    "}",
    ",",
    "%",
    "@",
    "`",
    ".",
    "~",
    "\u0000",
    "\u0085",
    "\u00a0",
    "\u2028",
    "\ufeff",
    "\ud800",
    "\udc00",
    "🚀",
    "é",
    "\u007f",
    "\ufffe",
  ];
  const n = Math.floor(random() * 12);
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(random() * alphabet.length)];
  return s;
}

/** A small deterministic generator (mulberry32), so a failure repeats. */
function seeded(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("specYaml() reads back through yaml's parser as every hostile string it was given", () => {
  for (const s of HOSTILE_STRINGS) {
    const value = { s, list: [s, s], nested: { [s || "empty"]: s }, items: [{ a: s, b: [s] }] };
    assertEquals(parse(specYaml(value)), value, JSON.stringify(s));
  }
});

Deno.test("specYaml() reads back as 5 000 random strings, as values and as keys", () => {
  const random = seeded(32);
  for (let i = 0; i < 5000; i++) {
    const s = randomString(random);
    const value = { v: s, [s]: [s], deep: { list: [[s], [], {}, null, true, 7, -3] } };
    assertEquals(parse(specYaml(value)), value, JSON.stringify(s));
  }
});

Deno.test("specYaml() reads back as a whole task, and as the yaml package's text of it did", () => {
  const input = TaskInputSchema.parse({
    id: "tracker_b-octo-org-app-42",
    title: "Parser rejects trailing commas: case 42",
    role: "backend",
    goal: "Parser rejects trailing commas\n\n" + "Steps to reproduce\n".repeat(3),
    depends_on: ["a", "b"],
    owned_files: ["src/parser.ts"],
    completion_signals: [{ test_passes: "deno test" }, { path_exists: "src/parser.ts" }],
    source: {
      tracker: "tracker_b",
      key: "42",
      ref: "octo-org/app#42",
      url: "https://github.com/octo-org/app/issues/42",
    },
  });
  const task = {
    ...newTask({ ...input, id: input.id! }, {
      status: "OPEN",
      seq: 3,
      now: "2026-11-20T10:00:00.000Z",
    }),
  };
  const text = specYaml(task as unknown as Record<string, unknown>);
  assertEquals(parse(text), JSON.parse(JSON.stringify(task)));
  assertEquals(parse(text), parse(stringify(task, { lineWidth: 0 })));
});
