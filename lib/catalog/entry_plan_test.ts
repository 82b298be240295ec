import assert from "node:assert/strict";
import { installedRecord, upgradeChanges, upgradeVerdict } from "./entry_plan.ts";
import { CatalogEntrySchema } from "./schema.ts";
import type { InstalledRecord, ManagedServer } from "./managed_config.ts";
import { validEntry } from "./_test_catalog.ts";

const base = validEntry({ command: "srv", args: ["--stdio"], env: { LEVEL: "1" } });
const entry = (over: Record<string, unknown> = {}) =>
  CatalogEntrySchema.parse({ ...base, version_pin: "2.0.0", auto_upgrade: true, ...over });
const server: ManagedServer = { command: "srv", args: ["--stdio"], env: { LEVEL: "1" } };
const record = (over: Partial<InstalledRecord> = {}): InstalledRecord => ({
  version_pin: "1.0.0",
  installed_at: "2026-11-01T12:00:00.000Z",
  verified_by_service: true,
  auto_upgrade: true,
  install_command: base.install_command as string[],
  allowed_env: [],
  ...over,
});

// Who decides, and what an upgrade may change without asking: one row per rule.
const VERDICTS: [
  string,
  ReturnType<typeof entry>,
  InstalledRecord,
  ManagedServer | undefined,
  string | true,
][] = [
  [
    "the user allowed it, the catalog offers it, only the pin changes",
    entry(),
    record(),
    server,
    true,
  ],
  [
    "the catalog offers it but the user never allowed it",
    entry(),
    record({ auto_upgrade: false }),
    server,
    "auto-upgrade was not allowed at install",
  ],
  [
    "the user allowed it but the catalog stopped offering it",
    entry({ auto_upgrade: false }),
    record(),
    server,
    "the catalog no longer marks it auto_upgrade",
  ],
  [
    "a new install command",
    entry({ install_command: ["curl", "x"] }),
    record(),
    server,
    "it changes install_command",
  ],
  [
    "an install record that predates install_command",
    entry(),
    record({ install_command: undefined }),
    server,
    "it changes install_command",
  ],
  ["a new command", entry({ command: "other" }), record(), server, "it changes command"],
  ["new args", entry({ args: ["--stdio", "--evil"] }), record(), server, "it changes args"],
  [
    "a new env",
    entry({ env: { LEVEL: "1", TOKEN: "${GITHUB_TOKEN}" } }),
    record(),
    server,
    "it changes env",
  ],
  [
    "an entry no longer verified",
    entry({ verified_by_service: false }),
    record(),
    server,
    "it changes verified_by_service",
  ],
  [
    "a server missing from the block",
    entry(),
    record(),
    undefined,
    "it changes command, args, env",
  ],
];

for (const [name, e, r, s, expected] of VERDICTS) {
  Deno.test(`upgradeVerdict(): ${name}`, () => {
    const verdict = upgradeVerdict(e, r, upgradeChanges(e, r, s));
    assert.deepEqual(
      verdict,
      expected === true ? { auto: true } : { auto: false, reason: expected },
    );
  });
}

Deno.test("installedRecord(): consent comes from the user, never from the catalog", () => {
  const e = entry({ env: { T: "${GITHUB_TOKEN}" }, args: ["${HOME}"] });
  const r = installedRecord(e, new Date("2026-11-02T00:00:00Z"), {
    autoUpgrade: false,
    allowedEnv: ["GITHUB_TOKEN", "UNRELATED", "GITHUB_TOKEN"],
  });
  assert.equal(r.auto_upgrade, false, "the catalog's auto_upgrade: true is not consent");
  assert.deepEqual(r.allowed_env, ["GITHUB_TOKEN"], "only names the entry references are kept");
  assert.deepEqual(r.install_command, e.install_command);
});
