/**
 * Server entry: serves the workspace in the current directory on 127.0.0.1:8052 (SERVICE_PORT).
 * Equivalent to `deno run -A cli.ts serve`.
 */
import { main } from "./cli_main.ts";

if (import.meta.main) {
  Deno.exit(await main(["serve", ...Deno.args]));
}
