/**
 * The diagnostic bundle of `service debug`: a directory under `.sdd/debug/` (and a .tar.gz of
 * it when `tar` is available) with the redacted configuration, versions, the status object,
 * doctor results and the last lines of the logs. Secrets are masked everywhere.
 */
import $ from "dax";
import { basename, join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { configPath } from "../config/load.ts";
import type { CheckResult } from "../check_result.ts";
import { appContext } from "../server/serve.ts";
import { collectStatus } from "../status/status.ts";
import { fileStamp } from "../state/repair_jsonl.ts";
import { workspacePaths } from "../workspace.ts";
import { redactObject, redactText, secretEnvValues } from "./redact.ts";

/** How many trailing lines of each log go into the bundle. */
const LOG_TAIL_LINES = 200;

/** Where the bundle went. */
export interface DebugBundle {
  dir: string;
  tarball?: string;
  files: string[];
}

async function tail(file: string, lines: number): Promise<string | undefined> {
  try {
    const info = await Deno.stat(file);
    const f = await Deno.open(file);
    try {
      const size = Math.min(info.size, 512 * 1024);
      await f.seek(info.size - size, Deno.SeekMode.Start);
      const buf = new Uint8Array(size);
      let read = 0;
      while (read < size) {
        const n = await f.read(buf.subarray(read));
        if (n === null) break;
        read += n;
      }
      return new TextDecoder().decode(buf.subarray(0, read)).split("\n").slice(-lines - 1).join(
        "\n",
      );
    } finally {
      f.close();
    }
  } catch {
    return undefined;
  }
}

async function version(cmd: string, args: string[]): Promise<string> {
  const o = await $`${cmd} ${args}`.stdin("null").quiet().noThrow().timeout(10_000);
  return o.code === 127 ? "not found" : o.stdout.trim() || "unknown";
}

/** Options of {@link writeDebugBundle}. */
export interface DebugBundleOptions {
  /** The results of `service doctor` (lib/cli/commands/doctor.ts lists the checks). */
  doctor: CheckResult[];
  /** The environment whose secret values are masked (default: this process's). */
  env?: Record<string, string>;
}

/** Write the bundle for the workspace at `root`. */
export async function writeDebugBundle(
  root: string,
  options: DebugBundleOptions,
): Promise<DebugBundle> {
  const env = options.env ?? Deno.env.toObject();
  const paths = workspacePaths(root);
  const dir = join(paths.debug, `debug-${fileStamp()}`);
  await Deno.mkdir(dir, { recursive: true });
  const known = secretEnvValues(env);
  const files: string[] = [];
  const put = async (name: string, text: string) => {
    await Deno.writeTextFile(join(dir, name), redactText(text, known));
    files.push(name);
  };
  try {
    const raw = parseYaml(await Deno.readTextFile(configPath(root)));
    await put("service.yaml", stringifyYaml(redactObject(raw)));
  } catch (e) {
    await put("service.yaml.txt", `not readable: ${(e as Error).message}\n`);
  }
  await put(
    "versions.json",
    JSON.stringify(
      {
        deno: Deno.version,
        os: Deno.build.os,
        arch: Deno.build.arch,
        git: await version("git", ["--version"]),
        service_env: Object.fromEntries(
          Object.keys(env).filter((k) => k.startsWith("SERVICE_")).sort().map((k) => [k, "(set)"]),
        ),
      },
      null,
      2,
    ),
  );
  try {
    await put("status.json", JSON.stringify(await collectStatus(appContext(root, [])), null, 2));
  } catch (e) {
    await put("status.json", JSON.stringify({ error: (e as Error).message }));
  }
  await put("doctor.json", JSON.stringify(options.doctor, null, 2));
  const logs = [paths.serverLog, paths.accessLog];
  try {
    for await (const e of Deno.readDir(paths.runtime)) {
      if (e.isFile && e.name.endsWith(".log") && e.name !== "server.log") {
        logs.push(join(paths.runtime, e.name));
      }
    }
  } catch {
    // no runtime directory yet
  }
  for (const log of logs) {
    const text = await tail(log, LOG_TAIL_LINES);
    if (text !== undefined) await put(`tail-${basename(log)}.txt`, text);
  }
  let tarball: string | undefined = `${dir}.tar.gz`;
  try {
    const code = await $`tar -czf ${tarball} -C ${join(dir, "..")} ${basename(dir)}`
      .stdin("null").quiet().noThrow().timeout(60_000).code();
    if (code !== 0) tarball = undefined;
  } catch {
    tarball = undefined;
  }
  return { dir, tarball, files };
}
