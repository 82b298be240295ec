import assert from "node:assert/strict";
import { checkCatalog, checkCatalogBytes, MAX_CATALOG_BYTES, type Violation } from "./validate.ts";
import { validEntry } from "./_test_catalog.ts";

function doc(entries: unknown[], over: Record<string, unknown> = {}): Record<string, unknown> {
  return { version: 1, generated_at: "2026-11-01T12:00:00Z", entries, ...over };
}

function without(o: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...o };
  delete copy[key];
  return copy;
}

type Case = [name: string, value: unknown, expected: "ok" | [path: string, rule: RegExp][]];

const CASES: Case[] = [
  ["minimal valid document", doc([validEntry()]), "ok"],
  ["empty entries", doc([]), "ok"],
  [
    "every optional field",
    doc([validEntry({
      auto_upgrade: true,
      signature: "c2ln",
      command: "node",
      args: ["server.js"],
      env: { A: "1" },
      transports: ["stdio", "http", "sse"],
    })]),
    "ok",
  ],
  [
    "fractional seconds in generated_at",
    doc([], { generated_at: "2026-11-01T12:00:00.123Z" }),
    "ok",
  ],
  ["id of 80 characters", doc([validEntry({ id: "a".repeat(80) })]), "ok"],
  ["id with dots, underscores, dashes", doc([validEntry({ id: "0a.b_c-d" })]), "ok"],
  ["unknown top-level field", doc([], { extra: 1 }), [["extra", /unknown field "extra"/]]],
  ["unknown entry field", doc([validEntry({ colour: "red" })]), [[
    "entries[0].colour",
    /unknown field/,
  ]]],
  ["missing version", without(doc([]), "version"), [[
    "version",
    /^missing required field "version" \(version must be an integer\)$/,
  ]]],
  ["version 0", doc([], { version: 0 }), [["version", /at least 1/]]],
  ["version 1.5", doc([], { version: 1.5 }), [["version", /integer/]]],
  ["version as string", doc([], { version: "1" }), [["version", /integer/]]],
  ["version 2", doc([{ anything: "new" }], { version: 2, more: true }), [[
    "version",
    /catalog version 2 is newer .* upgrade the service/,
  ]]],
  ["missing generated_at", without(doc([]), "generated_at"), [[
    "generated_at",
    /^missing required field "generated_at"/,
  ]]],
  ["non-date generated_at", doc([], { generated_at: "yesterday" }), [[
    "generated_at",
    /ISO-8601 UTC date-time/,
  ]]],
  ["generated_at with offset (not UTC)", doc([], { generated_at: "2026-11-01T12:00:00+02:00" }), [[
    "generated_at",
    /UTC/,
  ]]],
  ["generated_at on 30 February", doc([], { generated_at: "2026-02-30T12:00:00Z" }), [[
    "generated_at",
    /ISO-8601/,
  ]]],
  ["missing entries", without(doc([]), "entries"), [[
    "entries",
    /^missing required field "entries"/,
  ]]],
  ["entries not an array", doc([], { entries: {} }), [["entries", /array/]]],
  ["entry not an object", doc(["memory"]), [["entries[0]", /object/]]],
  ...(["id", "name", "description", "homepage", "repository", "install_command", "version_pin"]
    .map((k): Case => [`missing ${k}`, doc([without(validEntry(), k)]), [[
      `entries[0].${k}`,
      new RegExp(`^missing required field "${k}" \\(.*(string|array)`),
    ]]])),
  ["missing transports", doc([without(validEntry(), "transports")]), [[
    "entries[0].transports",
    /^missing required field "transports" \(.*array/,
  ]]],
  ["missing verified_by_service", doc([without(validEntry(), "verified_by_service")]), [[
    "entries[0].verified_by_service",
    /^missing required field "verified_by_service" \(.*true or false/,
  ]]],
  ["empty id", doc([validEntry({ id: "" })]), [["entries[0].id", /empty|match/]]],
  ["81-character id", doc([validEntry({ id: "a".repeat(81) })]), [[
    "entries[0].id",
    /at most 80/,
  ]]],
  ["upper-case id", doc([validEntry({ id: "Memory" })]), [["entries[0].id", /must match/]]],
  ["id starting with a dash", doc([validEntry({ id: "-x" })]), [["entries[0].id", /must match/]]],
  ["id with a trailing newline", doc([validEntry({ id: "memory\n" })]), [[
    "entries[0].id",
    /must match/,
  ]]],
  ["id with a slash", doc([validEntry({ id: "a/b" })]), [["entries[0].id", /must match/]]],
  ["duplicate ids", doc([validEntry(), validEntry({ name: "Other" })]), [[
    "entries[1].id",
    /not unique: entries\[0\]/,
  ]]],
  ["empty name", doc([validEntry({ name: "" })]), [["entries[0].name", /empty/]]],
  ["empty description", doc([validEntry({ description: "" })]), [[
    "entries[0].description",
    /empty/,
  ]]],
  ["non-URI homepage", doc([validEntry({ homepage: "example.com" })]), [[
    "entries[0].homepage",
    /absolute URI/,
  ]]],
  ["homepage with spaces", doc([validEntry({ homepage: "https://ex ample.com" })]), [[
    "entries[0].homepage",
    /URI/,
  ]]],
  ["non-URI repository", doc([validEntry({ repository: "not a uri" })]), [[
    "entries[0].repository",
    /URI/,
  ]]],
  [
    "shell-string install command",
    doc([validEntry({ install_command: "npx -y pkg && rm -rf ~" })]),
    [[
      "entries[0].install_command",
      /not a single shell string/,
    ]],
  ],
  ["shell string in a one-item argv", doc([validEntry({ install_command: ["npx -y pkg"] })]), [[
    "entries[0].install_command[0]",
    /looks like a shell string/,
  ]]],
  ["empty install command", doc([validEntry({ install_command: [] })]), [[
    "entries[0].install_command",
    /at least 1 item/,
  ]]],
  ["empty argv item", doc([validEntry({ install_command: ["npm", ""] })]), [[
    "entries[0].install_command[1]",
    /non-empty string/,
  ]]],
  ["non-string argv item", doc([validEntry({ install_command: ["npm", 3] })]), [[
    "entries[0].install_command[1]",
    /non-empty string/,
  ]]],
  ["empty version_pin", doc([validEntry({ version_pin: "" })]), [[
    "entries[0].version_pin",
    /empty/,
  ]]],
  ["no transports", doc([validEntry({ transports: [] })]), [[
    "entries[0].transports",
    /at least 1 item/,
  ]]],
  ["unknown transport", doc([validEntry({ transports: ["stdio", "websocket"] })]), [[
    "entries[0].transports[1]",
    /one of stdio, http, sse/,
  ]]],
  ["verified_by_service as string", doc([validEntry({ verified_by_service: "yes" })]), [[
    "entries[0].verified_by_service",
    /^verified_by_service must be true or false$/,
  ]]],
  ["auto_upgrade as string", doc([validEntry({ auto_upgrade: "true" })]), [[
    "entries[0].auto_upgrade",
    /^auto_upgrade must be true or false$/,
  ]]],
  ["signature as number", doc([validEntry({ signature: 1 })]), [[
    "entries[0].signature",
    /string/,
  ]]],
  ["args not strings", doc([validEntry({ args: ["a", 2] })]), [["entries[0].args[1]", /string/]]],
  ["env with a number value", doc([validEntry({ env: { PORT: 80 } })]), [[
    "entries[0].env.PORT",
    /string/,
  ]]],
  ["document is an array", [], [["$", /JSON object/]]],
  ["document is null", null, [["$", /JSON object/]]],
];

for (const [name, value, expected] of CASES) {
  Deno.test(`catalog table: ${name}`, () => {
    const result = checkCatalog(value);
    if (expected === "ok") {
      assert.ok(
        result.ok,
        `expected valid, got ${JSON.stringify(!result.ok && result.violations)}`,
      );
      return;
    }
    assert.ok(!result.ok, "expected a rejection");
    for (const [path, rule] of expected) {
      const hit: Violation | undefined = result.violations.find((v) =>
        v.path === path && rule.test(v.rule)
      );
      assert.ok(hit, `no violation ${path} ~ ${rule}; got ${JSON.stringify(result.violations)}`);
    }
  });
}

Deno.test("catalog: every violation of a document is listed, each with its path", () => {
  const result = checkCatalog(doc([
    validEntry({ id: "UPPER", transports: ["ws"] }),
    validEntry({ id: "ok", homepage: "nope", extra: 1 }),
    validEntry({ id: "ok" }),
  ], { generated_at: "nope" }));
  assert.ok(!result.ok);
  const paths = result.violations.map((v) => v.path).sort();
  assert.deepEqual(paths, [
    "entries[0].id",
    "entries[0].transports[0]",
    "entries[1].extra",
    "entries[1].homepage",
    "entries[2].id",
    "generated_at",
  ]);
});

Deno.test("catalog: auto_upgrade defaults to false", () => {
  const result = checkCatalog(doc([validEntry()]));
  assert.ok(result.ok);
  assert.equal(result.catalog.entries[0].auto_upgrade, false);
});

Deno.test("catalog bytes: malformed JSON is one violation naming the parse error", () => {
  const result = checkCatalogBytes(new TextEncoder().encode('{"version": 1,'));
  assert.ok(!result.ok);
  assert.equal(result.violations[0].path, "$");
  assert.match(result.violations[0].rule, /not valid JSON/);
});

Deno.test("catalog bytes: invalid UTF-8 is refused", () => {
  const result = checkCatalogBytes(new Uint8Array([0x7b, 0xff, 0x7d]));
  assert.ok(!result.ok);
  assert.match(result.violations[0].rule, /not valid JSON/);
});

Deno.test("catalog bytes: a 50 MB document is refused by size, quickly, without parsing", () => {
  const big = new Uint8Array(50 * 1024 * 1024).fill(0x20);
  const started = performance.now();
  const result = checkCatalogBytes(big);
  assert.ok(performance.now() - started < 1000);
  assert.ok(!result.ok);
  assert.match(result.violations[0].rule, new RegExp(`over the ${MAX_CATALOG_BYTES}-byte limit`));
});

Deno.test("catalog bytes: a valid document parses", () => {
  const result = checkCatalogBytes(new TextEncoder().encode(JSON.stringify(doc([validEntry()]))));
  assert.ok(result.ok);
  assert.equal(result.catalog.entries[0].id, "memory");
});

Deno.test("catalog: the example in docs/mcp.md is a valid catalog", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/mcp.md", import.meta.url));
  const example = /```json\n([\s\S]*?)\n```/.exec(doc)![1];
  const result = checkCatalog(JSON.parse(example));
  assert.ok(result.ok, JSON.stringify(!result.ok && result.violations));
});
