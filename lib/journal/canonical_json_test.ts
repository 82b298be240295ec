import assert from "node:assert/strict";
import {
  canonicalJson,
  CanonicalJsonError,
  canonicalJsonExact,
  compareCodePoints,
} from "./canonical_json.ts";

// A small deterministic PRNG so a failure can be replayed from its seed.
function mulberry32(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = [
  "a",
  "Z",
  "0",
  " ",
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\r",
  "\b",
  "\f",
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\u0080",
  "é",
  "ß",
  "—",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\uffff",
  "日本",
  "🚀",
  "😀",
  "\u{10ffff}",
  "\ud800",
  "\udfff",
  "<",
  "&",
  "'",
];

function randomString(rand: () => number): string {
  let s = "";
  const n = Math.floor(rand() * 8);
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 3 || r < 0.35) {
    const k = Math.floor(rand() * 6);
    if (k === 0) return null;
    if (k === 1) return rand() < 0.5;
    if (k === 2) return Math.floor((rand() - 0.5) * 2 ** 40);
    if (k === 3) {
      return [0, -1, 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER][Math.floor(rand() * 5)];
    }
    return randomString(rand);
  }
  if (r < 0.65) {
    return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  }
  const obj: Record<string, unknown> = {};
  const n = Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) obj[randomString(rand)] = randomValue(rand, depth + 1);
  return obj;
}

Deno.test("canonicalJson() writes the same bytes as Python's json.dumps(sort_keys, compact) on random values", async () => {
  const rand = mulberry32(20261121);
  const values = Array.from({ length: 600 }, () => randomValue(rand, 0));
  const input = values.map((v) => JSON.stringify(v)).join("\n") + "\n";
  const python = new Deno.Command("python3", {
    args: [
      "-c",
      "import sys,json\nfor l in sys.stdin:\n  print(json.dumps(json.loads(l),sort_keys=True,separators=(',',':')))",
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = python.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { stdout, success } = await python.output();
  assert.ok(success, "python3 failed");
  const expected = new TextDecoder().decode(stdout).split("\n");
  values.forEach((value, i) => {
    assert.equal(canonicalJson(value), expected[i], `value #${i}: ${JSON.stringify(value)}`);
  });
});

Deno.test("canonicalJson() escapes exactly as DESIGN.md §3 shows", () => {
  const cases: [unknown, string][] = [
    [{ b: 1, a: [true, false, null] }, '{"a":[true,false,null],"b":1}'],
    [
      "Document the parser — naïve version 🚀",
      '"Document the parser \\u2014 na\\u00efve version \\ud83d\\ude80"',
    ],
    ["\u007f\u0000\n", '"\\u007f\\u0000\\n"'],
    ["</script>", '"</script>"'],
    [-0, "0"],
    [{ "\u{1f600}": 1, "\uffff": 2 }, '{"\\uffff":2,"\\ud83d\\ude00":1}'],
  ];
  for (const [value, text] of cases) assert.equal(canonicalJson(value), text);
});

Deno.test("canonicalJson() rejects values with no canonical form", () => {
  for (
    const bad of [
      1.5,
      NaN,
      Infinity,
      -Infinity,
      2 ** 53,
      { a: undefined },
      [() => 1],
      { n: 0.1 },
      10n,
    ]
  ) {
    assert.throws(() => canonicalJson(bad), CanonicalJsonError, `accepted ${String(bad)}`);
  }
});

Deno.test("compareCodePoints() orders astral characters after the whole BMP, as Python does", () => {
  assert.ok(compareCodePoints("\uffff", "\u{10000}") < 0);
  assert.ok("\uffff" > "\u{10000}"); // UTF-16 order would be wrong
  assert.equal(compareCodePoints("ab", "ab"), 0);
  assert.ok(compareCodePoints("a", "ab") < 0);
});

Deno.test("the stringify fast path writes exactly what the exact encoder writes", () => {
  const values: unknown[] = [
    { a: 1, b: [true, null, "x"], c: { d: -0, e: "caf\u00e9 \u007f \u{1f600} \ud800" } },
    { b: 1, a: 2 },
    { "1": "digit key", a: 1 },
    { "\u{1f600}": 1, "\uffff": 2 },
    { z: { y: { x: [1, 2, { w: "tab\tnew\nline" }] } } },
    { schema_version: 1, columns: { merged: [{ task_id: "t", last_index: 3 }] } },
    [],
    "plain",
    9007199254740991,
    new Date(0),
  ];
  for (const value of values) assert.equal(canonicalJson(value), canonicalJsonExact(value));
  for (const bad of [{ a: 1.5 }, { a: undefined }, { a: 2 ** 53 }, { a: NaN }]) {
    assert.throws(() => canonicalJson(bad));
  }
});
