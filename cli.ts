/**
 * The `service` command line (DESIGN.md §8): `deno run -A cli.ts <command>`, the program itself in
 * cli_main.ts. This entry imports nothing up front, so on the first run of a fresh checkout it
 * can say once that the dependencies are being installed before Deno installs them while loading
 * the program (quietly, under `deno run -q`, as the README's first command runs it).
 */

/** True in a source checkout whose npm packages are not installed into node_modules/ yet. */
function firstInstall(): boolean {
  const here = new URL(".", import.meta.url);
  if (here.protocol !== "file:") return false;
  const exists = (name: string) => {
    try {
      Deno.statSync(new URL(name, here));
      return true;
    } catch {
      return false;
    }
  };
  return exists("deno.json") && !exists("node_modules/.deno");
}

if (import.meta.main) {
  if (firstInstall()) {
    console.error(
      "service: first run in this checkout: installing its dependencies into node_modules/…",
    );
  }
  // Not a literal: Deno would load (and install) a literal import's graph before this file runs.
  const program = "./cli_main.ts";
  const { main } = await import(program);
  Deno.exit(await main(Deno.args));
}
