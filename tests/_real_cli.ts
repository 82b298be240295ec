/**
 * Shared set-up of the real-CLI service tests: a workspace whose `service.yaml` names a real
 * adapter, a one-step plan, and the shell command a scripted provider stand-in makes the CLI
 * run (write a file, then report completion to the task server as the role prompt says).
 */
import { join } from "node:path";
import { sh } from "./_e2e.ts";
import { resolveBinary } from "../lib/agents/preflight.ts";

/** The binary's path, or undefined (with a SKIP line naming the install command). */
export async function realBinary(name: string, pkg: string): Promise<string | undefined> {
  const path = await resolveBinary(name, Deno.env.toObject());
  if (!path) console.warn(`SKIP: \`${name}\` not on PATH (install it with: npm i -g ${pkg})`);
  return path;
}

/** The command that writes `file` and reports completion over HTTP, as an agent would. */
export function writeAndReport(file: string, text: string): string {
  return `printf '%s\\n' '${text}' > ${file} && curl -sS --max-time 20 -X POST ` +
    `"$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete" ` +
    `\${SERVICE_TOKEN:+-H "Authorization: Bearer $SERVICE_TOKEN"} ` +
    `-H "Content-Type: application/json" -d '{"summary":"wrote ${file}"}'`;
}

/** A git repository with `service.yaml` (`cli: <adapter>`) and a plan of one step. */
export async function realCliWorkspace(
  dir: string,
  adapter: string,
  file: string,
  extraConfig = "",
): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "e2e@localhost");
  await sh(dir, "config", "user.name", "e2e");
  await Deno.writeTextFile(join(dir, "README.md"), "# real cli\n");
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `cli: ${adapter}\nroles:\n  backend: { timeout_minutes: 2 }\n${extraConfig}`,
  );
  await Deno.writeTextFile(
    join(dir, "plan.yaml"),
    [
      "name: real-cli",
      "stages:",
      "  - name: one",
      "    steps:",
      "      - id: write",
      "        role: backend",
      `        goal: Write ${file} and report.`,
      `        completion_signals: [{ path_exists: ${file} }]`,
      "",
    ].join("\n"),
  );
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
}
