import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { qualityGatesFor } from "./quality_gates.ts";

const BASE = "cli: claude\n";

Deno.test("qualityGatesFor(): top-level gates, then the role's; a role gate of the same name replaces one", () => {
  const config = parseConfig(
    BASE + "roles:\n  backend:\n    quality_gates:\n" +
      "      - {name: lint, command: deno lint --strict}\n" +
      "      - {name: types, command: deno check main.ts, timeout_s: 30}\n" +
      "  docs: {}\n" +
      "quality_gates:\n  - {name: tests, command: deno task test}\n  - {name: lint, command: deno lint}\n",
    "service.yaml",
  );
  assert.deepEqual(qualityGatesFor(config, "docs"), [
    { name: "tests", command: "deno task test", timeout_s: 600 },
    { name: "lint", command: "deno lint", timeout_s: 600 },
  ]);
  assert.deepEqual(qualityGatesFor(config, "backend"), [
    { name: "tests", command: "deno task test", timeout_s: 600 },
    { name: "lint", command: "deno lint --strict", timeout_s: 600 },
    { name: "types", command: "deno check main.ts", timeout_s: 30 },
  ]);
  assert.deepEqual(qualityGatesFor(parseConfig(BASE + "roles: [qa]\n", "s"), "qa"), []);
});

/** Broken gate configurations and what the error names. */
const BAD: { yaml: string; message: RegExp }[] = [
  { yaml: "quality_gates:\n  - {command: deno lint}\n", message: /quality_gates\[0\]\.name/ },
  { yaml: "quality_gates:\n  - {name: lint}\n", message: /quality_gates\[0\]\.command/ },
  { yaml: "quality_gates:\n  - {name: lint, command: x, timeout_s: 0}\n", message: /timeout_s/ },
  { yaml: "quality_gates:\n  - {name: lint, command: x, timout_s: 5}\n", message: /timout_s/ },
  {
    yaml: "quality_gates:\n  - {name: lint, command: a}\n  - {name: lint, command: b}\n",
    message: /duplicate name lint/,
  },
  { yaml: "quality_gates: deno lint\n", message: /quality_gates/ },
  { yaml: "verification_nudge: {max_age_hours: -1}\n", message: /max_age_hours/ },
];

for (const { yaml, message } of BAD) {
  Deno.test(`service.yaml refuses ${JSON.stringify(yaml.trim())}`, () => {
    assert.throws(() => parseConfig(BASE + "roles: [qa]\n" + yaml, "service.yaml"), message);
  });
}
