/**
 * `promtool check metrics` (Debian's `prometheus` package) over a scrape: the exposition text
 * parses as Prometheus parses it and passes its lint. Missing promtool fails with the fix.
 */
import assert from "node:assert/strict";

/** Run `promtool check metrics` on `text`; throws with promtool's words when it objects. */
export async function promtoolCheck(text: string): Promise<void> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("promtool", {
      args: ["check", "metrics"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    throw new Error(
      `promtool is not installed (${(e as Error).message}): apt-get install -y prometheus`,
    );
  }
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `promtool check metrics failed:\n${said}\n--- on ---\n${text}`);
  assert.equal(said.trim(), "", `promtool has remarks:\n${said}`);
}
