/**
 * The real CLIs' own output for a provider's usage or rate limit (tests/fixtures/usage_limits/,
 * recorded by tests/_capture_limits.ts from Claude Code, Codex and Gemini CLI run against the
 * providers' stand-ins; the manifest names each CLI's version), read by each adapter's log
 * reading as the service reads a session log: every one is a rate limit, and when any form on
 * its lines names the reset, the adapter is parked until that reset — rounded up to the second,
 * a time printed to the minute to the end of that minute — else for the cooldown.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { logParserFor } from "../lib/agents/adapters/mod.ts";
import { firstRateLimit, scanLog } from "../lib/agents/rate_limit.ts";
import { parkUntil } from "../lib/agents/reset_time.ts";
import { type CapturedCase, FIXTURES } from "./_capture_limits.ts";

const manifest: CapturedCase[] = JSON.parse(
  await Deno.readTextFile(join(FIXTURES, "manifest.json")),
);

for (const c of manifest) {
  const park = c.expect.named
    ? `parks ${c.adapter} until ${new Date(c.expect.until * 1000).toISOString()}`
    : `parks ${c.adapter} for the cooldown`;
  Deno.test(`usage limits, real ${c.version} output: ${c.name} ${park} (${c.note})`, async () => {
    const log = await Deno.readTextFile(join(FIXTURES, c.file));
    const match = firstRateLimit(scanLog(log, logParserFor(c.adapter)));
    assert.ok(match, `no rate limit read in ${c.file}`);
    assert.equal(match.category, "rate_limit");
    if (!c.expect.named) {
      assert.equal(match.reset, undefined, `${c.file}: ${match.rule} read a reset`);
      return;
    }
    assert.ok(match.reset, `${c.file}: ${match.rule} on line ${match.lineNumber} names no reset`);
    assert.equal(parkUntil(match.reset, c.captured_at_ms, c.zone), c.expect.until);
  });
}

Deno.test("usage limits: the fixtures cover every built-in CLI's limits, named and not", () => {
  for (const adapter of ["claude", "codex", "gemini"]) {
    const mine = manifest.filter((c) => c.adapter === adapter);
    assert.ok(mine.some((c) => c.expect.named), `${adapter}: a limit naming its reset`);
    assert.ok(mine.some((c) => !c.expect.named), `${adapter}: a limit naming none`);
  }
});
