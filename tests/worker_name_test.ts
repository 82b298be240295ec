/** `service worker --name` follows the one id rule (lib/ids.ts) the server holds worker names to. */
import assert from "node:assert/strict";
import { cli } from "./_e2e.ts";

Deno.test("service worker refuses a name the server would refuse, before it calls the server, saying the rule", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (const name of ["a..b", "-x", "a/b"]) {
      const r = await cli(root, "worker", "--server", "http://127.0.0.1:9", `--name=${name}`);
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /--name \S+ must be 1 to 128 letters, digits, .* and no '\.\.'/, r.out);
      assert.doesNotMatch(r.out, /127\.0\.0\.1:9/, "no call was made");
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
