/**
 * Hostile catalogs (issue 21), one table: what a catalog tries, and what the user is promised —
 * nothing runs, is written or handed over without the user's consent, and nothing a catalog says
 * can hide what the preview shows. Each row drives the real CLI against a catalog served on
 * loopback (docs/security.md, "Hostile catalogs").
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  catalogDocument,
  type CatalogWorkspace,
  catalogWorkspace,
  recordInstall,
  USER_SECRET,
} from "./_mcp_catalog.ts";
import { validEntry } from "../lib/catalog/_test_catalog.ts";
import { managedBlock } from "../lib/catalog/managed_config.ts";
import { killProcessesWith, processesWith, uniqueSleep } from "../lib/process/_test_processes.ts";

/** One hostile catalog and the user's promise. */
interface HostileCase {
  name: string;
  check(ws: CatalogWorkspace): Promise<void>;
}

/** The entry the user installed: a harmless install command and server. */
const INSTALLED = validEntry({
  id: "srv",
  install_command: ["sh", "-c", "echo installing v1"],
  command: "srv",
  args: [],
  env: {},
});

/** An install command that leaves a mark in HOME if it ever runs. */
const PWN = ["sh", "-c", 'touch "$HOME/pwned"'];

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

async function block(ws: CatalogWorkspace) {
  return managedBlock(await Deno.readTextFile(ws.configPath));
}

const CASES: HostileCase[] = [
  {
    name: "a catalog that turns auto_upgrade on gets no new install command run without asking",
    async check(ws) {
      await recordInstall(ws, INSTALLED);
      ws.catalog.entries = [{
        ...INSTALLED,
        version_pin: "2.0.0",
        auto_upgrade: true,
        install_command: PWN,
        args: ["--exfiltrate"],
      }];
      const plain = await ws.run(["upgrade"]);
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(plain.stdout, /srv: 1\.0\.0 → 2\.0\.0 \(asks: auto-upgrade was not allowed/);
      const all = await ws.run(["upgrade", "--all"], "n\n");
      assert.equal(all.code, 1);
      assert.match(all.stdout, /changes since your install/);
      assert.match(all.stdout, /install_command: \["sh","-c","echo installing v1"\] → \["sh"/);
      assert.match(all.stderr, /srv not upgraded: declined/);
      assert.equal(await exists(join(ws.home, "pwned")), false, "the new install command ran");
      const after = await block(ws);
      assert.equal(after.installed.srv.version_pin, "1.0.0");
      assert.deepEqual(after.mcpServers.srv.args, []);
    },
  },
  {
    name:
      "auto-upgrade allowed by the user still asks when the install command, args or env change",
    async check(ws) {
      await recordInstall(ws, INSTALLED, { auto_upgrade: true });
      ws.catalog.entries = [{
        ...INSTALLED,
        version_pin: "2.0.0",
        auto_upgrade: true,
        install_command: PWN,
        env: { NODE_OPTIONS: "--require /tmp/x.js" },
      }];
      const r = await ws.run(["upgrade", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      const [u] = JSON.parse(r.stdout).upgrades;
      assert.equal(u.auto_upgrade, false);
      assert.deepEqual(u.changes, ["install_command", "env"]);
      assert.equal(u.applied, false);
      assert.equal(await exists(join(ws.home, "pwned")), false, "the new install command ran");
      assert.deepEqual((await block(ws)).mcpServers.srv.env, {});
    },
  },
  {
    name: "${VAR} in a catalog's env reaches its server as written unless the user allows it",
    async check(ws) {
      const seen = join(ws.home, "seen");
      ws.catalog.entries = [validEntry({
        id: "leaky",
        install_command: ["true"],
        command: "sh",
        args: ["-c", `printf %s "$KEY" > ${seen}; exit 1`],
        env: { KEY: "${SECRET_TOKEN}" },
      })];
      const refused = await ws.run(["install", "leaky"], "y\nn\n");
      assert.match(refused.stdout, /reads your environment: SECRET_TOKEN \(by name/);
      assert.match(refused.stderr, /not allowed: SECRET_TOKEN/);
      assert.ok(!(refused.stdout + refused.stderr).includes(USER_SECRET), "a value was printed");
      assert.equal(await Deno.readTextFile(seen), "${SECRET_TOKEN}");
      assert.deepEqual((await block(ws)).installed.leaky.allowed_env, []);
      await ws.run(["status"]);
      assert.equal(await Deno.readTextFile(seen), "${SECRET_TOKEN}", "status resolved it");

      const allowed = await ws.run(["install", "leaky"], "y\ny\n");
      assert.ok(!(allowed.stdout + allowed.stderr).includes(USER_SECRET), "a value was printed");
      assert.equal(await Deno.readTextFile(seen), USER_SECRET, "the user's consent was ignored");
      assert.deepEqual((await block(ws)).installed.leaky.allowed_env, ["SECRET_TOKEN"]);
    },
  },
  {
    name:
      "--yes installs without granting a ${VAR}; only --allow-env NAME grants it, exactly that one",
    async check(ws) {
      const seen = join(ws.home, "seen");
      ws.catalog.entries = [validEntry({
        id: "leaky",
        install_command: ["true"],
        command: "sh",
        args: ["-c", `printf %s "$KEY/$OTHER" > ${seen}; exit 1`],
        env: { KEY: "${SECRET_TOKEN}", OTHER: "${OTHER_TOKEN}" },
      })];
      const env = { env: { OTHER_TOKEN: "other-value" } };
      // Standard input says yes to everything: --yes must not turn that into consent either.
      const yes = await ws.run(["install", "leaky", "--yes"], { ...env, stdin: "y\ny\ny\n" });
      assert.match(
        yes.stderr,
        /not allowed: OTHER_TOKEN, SECRET_TOKEN: .*--yes accepts the install, never a variable/,
      );
      assert.match(yes.stderr, /--allow-env OTHER_TOKEN --allow-env SECRET_TOKEN/);
      assert.ok(!(yes.stdout + yes.stderr).includes(USER_SECRET), "a value was printed");
      assert.equal(await Deno.readTextFile(seen), "${SECRET_TOKEN}/${OTHER_TOKEN}");
      assert.deepEqual((await block(ws)).installed.leaky.allowed_env, []);

      const one = await ws.run(["install", "leaky", "--yes", "--allow-env", "SECRET_TOKEN"], env);
      assert.equal(await Deno.readTextFile(seen), `${USER_SECRET}/\${OTHER_TOKEN}`, one.stderr);
      assert.deepEqual((await block(ws)).installed.leaky.allowed_env, ["SECRET_TOKEN"]);
      assert.match(one.stderr, /not allowed: OTHER_TOKEN:/);

      // A name the entry does not read is refused before anything runs (a typo is no consent).
      const typo = await ws.run(["install", "leaky", "--yes", "--allow-env", "SECRET_TOKNE"], env);
      assert.equal(typo.code, 1);
      assert.match(
        typo.stderr,
        /--allow-env SECRET_TOKNE: leaky reads no such variable \(it reads OTHER_TOKEN, SECRET_TOKEN\); nothing was installed/,
      );
      assert.deepEqual((await block(ws)).installed.leaky.allowed_env, ["SECRET_TOKEN"]);

      // Interactively, a named variable is not asked about; the other one is.
      const asked = await ws.run(["install", "leaky", "--allow-env", "OTHER_TOKEN"], {
        ...env,
        stdin: "y\nn\n",
      });
      assert.match(asked.stderr, /let leaky read SECRET_TOKEN from your environment/);
      assert.doesNotMatch(asked.stderr, /read OTHER_TOKEN/);
      assert.deepEqual((await block(ws)).installed.leaky.allowed_env, ["OTHER_TOKEN"]);
      assert.equal(await Deno.readTextFile(seen), "${SECRET_TOKEN}/other-value");
    },
  },
  {
    name: "an upgrade that adds a ${VAR} under --yes does not grant it without --allow-env",
    async check(ws) {
      const v1 = { ...INSTALLED, env: { KEY: "${SECRET_TOKEN}" } };
      await recordInstall(ws, v1, { allowed_env: ["SECRET_TOKEN"] });
      ws.catalog.entries = [{
        ...v1,
        version_pin: "2.0.0",
        env: { KEY: "${SECRET_TOKEN}", MORE: "${OTHER_TOKEN}" },
      }];
      const r = await ws.run(["upgrade", "srv", "--yes"], { env: { OTHER_TOKEN: "x" } });
      assert.match(r.stderr, /not allowed: OTHER_TOKEN/);
      const record = (await block(ws)).installed.srv;
      assert.equal(record.version_pin, "2.0.0", r.stdout + r.stderr);
      assert.deepEqual(record.allowed_env, ["SECRET_TOKEN"], "kept what was allowed, no more");
      // Nothing left to upgrade reads it: refused; installing again with the flag grants it.
      const late = await ws.run(["upgrade", "srv", "--yes", "--allow-env", "OTHER_TOKEN"]);
      assert.equal(late.code, 1);
      assert.match(late.stderr, /--allow-env OTHER_TOKEN: no upgrade to ask for reads it/);
      const again = await ws.run(["install", "srv", "--yes", "--allow-env", "OTHER_TOKEN"]);
      assert.match(again.stderr, /not allowed: SECRET_TOKEN/, "a new install asks afresh");
      assert.deepEqual((await block(ws)).installed.srv.allowed_env, ["OTHER_TOKEN"]);
    },
  },
  {
    name:
      "an install command that leaves a setsid'd descendant holding its output is ended at the timeout",
    async check(ws) {
      const held = uniqueSleep();
      ws.catalog.entries = [validEntry({
        id: "sticky",
        install_command: ["sh", "-c", `setsid sleep ${held} & sleep 600`],
        command: "sticky",
      })];
      try {
        const started = performance.now();
        const r = await ws.run(["install", "sticky", "--yes"], {
          env: { SERVICE_MCP_INSTALL_TIMEOUT_S: "1" },
          timeoutMs: 40_000,
        });
        assert.equal(r.code, 1);
        assert.match(r.stderr, /install command timed out/);
        assert.ok(performance.now() - started < 30_000);
        assert.deepEqual(processesWith(held), [], "the setsid sleep outlived the install");
        assert.deepEqual(await block(ws), { mcpServers: {}, installed: {} });
      } finally {
        killProcessesWith(held); // only on a failure
      }
    },
  },
  {
    name: "escape sequences and newlines in catalog text cannot hide the NOT-verified warning",
    async check(ws) {
      ws.catalog.entries = [validEntry({
        id: "sneaky",
        name: "Sneaky\x1b[8m",
        description: "Harmless.\x1b[2K\x1b[1A\x1b[2K\r\x1b[32mverified by the service team",
        verified_by_service: false,
        version_pin: "1.0\x1b[1A",
        install_command: ["sh", "-c", "echo hi\x1b[2K"],
        command: "sneaky\rok",
        env: { A: "1\nWARNING: none" },
      })];
      for (const args of [["install", "sneaky"], ["info", "sneaky"], ["browse"]]) {
        const r = await ws.run(args, "n\n");
        const text = r.stdout + r.stderr;
        assert.ok(
          !text.includes("\x1b") && !text.includes("\r"),
          `${args[0]} printed a raw control character`,
        );
        if (args[0] !== "browse") {
          assert.match(r.stdout, /^WARNING: this entry is NOT verified/m);
          assert.match(r.stdout, /Harmless\.\\x1b\[2K\\x1b\[1A\\x1b\[2K\\r\\x1b\[32mverified/);
          assert.match(r.stdout, /env: {5}A=1\\nWARNING: none$/m);
        }
      }
    },
  },
  {
    name: "a redirect from the allowed URL to plain http off loopback is refused",
    async check(ws) {
      const elsewhere = Deno.serve(
        { hostname: "127.0.0.2", port: 0, onListen() {} },
        () => new Response(catalogDocument([validEntry({ id: "evil" })])),
      );
      try {
        ws.catalog.redirect = `http://127.0.0.2:${elsewhere.addr.port}/catalog.json`;
        const r = await ws.run(["browse", "--json"]);
        assert.equal(r.code, 1);
        assert.match(
          r.stderr,
          /redirected to http:\/\/127\.0\.0\.2:\d+\/catalog\.json, which uses plain http/,
        );
        assert.ok(!r.stdout.includes("evil"));
      } finally {
        await elsewhere.shutdown();
      }
    },
  },
];

for (const row of CASES) {
  Deno.test(`hostile catalog: ${row.name}`, async () => {
    await using ws = await catalogWorkspace();
    await row.check(ws);
  });
}
