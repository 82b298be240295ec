/**
 * The container runtime: which one (`container.runtime`: podman, docker, or `auto` — podman,
 * then docker — found by a PATH lookup), whether it answers (`<runtime> info`), and its calls,
 * which run through the one process primitive (lib/process/spawn.ts) with a time limit.
 */
import { findOnPath } from "../process/new_session.ts";
import { spawnProcess } from "../process/spawn.ts";
import { runtimeCwd } from "./runtime_cwd.ts";
import { concatBytes } from "../util/bytes.ts";
import { lastErrorLine } from "../util/last_error_line.ts";
import { ContainerError } from "./errors.ts";
import type { RuntimePreference } from "./settings.ts";

/** The runtimes the service drives. */
export type RuntimeName = "podman" | "docker";

/** A runtime that answered. */
export interface ContainerRuntime {
  name: RuntimeName;
  /** Absolute path of its command. */
  bin: string;
  version: string;
  /** Containers run under the user's own user namespace (rootless podman or docker). */
  rootless: boolean;
  /** SELinux labels separate containers: bind mounts need the `z` option. */
  selinux: boolean;
  /** What else `doctor` shows: OCI runtime, cgroups version, storage driver. */
  facts: string;
}

/**
 * The variables a runtime's command needs from the service's environment (where its socket,
 * storage and configuration are); nothing of them reaches a container.
 */
const RUNTIME_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "TMPDIR",
  "XDG_RUNTIME_DIR",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "DBUS_SESSION_BUS_ADDRESS",
  "CONTAINER_HOST",
  "CONTAINER_CONNECTION",
  "CONTAINER_SSHKEY",
  "CONTAINERS_CONF",
  "CONTAINERS_STORAGE_CONF",
  "CONTAINERS_REGISTRIES_CONF",
  "REGISTRY_AUTH_FILE",
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "DOCKER_CONFIG",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "DOCKER_API_VERSION",
  "BUILDAH_ISOLATION",
];

/** The runtime's own variables out of `processEnv`. Pure. */
export function runtimeEnvironment(
  processEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(
    RUNTIME_ENV.filter((k) => k in processEnv).map((k) => [k, processEnv[k]]),
  );
}

/** The runtime `preference` names, found on `env.PATH`; undefined when there is none. */
export function findRuntime(
  preference: RuntimePreference,
  env: Record<string, string>,
): { name: RuntimeName; bin: string } | undefined {
  const names: RuntimeName[] = preference === "auto" ? ["podman", "docker"] : [preference];
  for (const name of names) {
    const bin = findOnPath(name, env.PATH);
    if (bin) return { name, bin };
  }
  return undefined;
}

/** The output of one runtime call. */
export interface CallResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Options of {@link runtimeCall}. */
export interface CallOptions {
  /** Time limit (default 60 s). */
  timeoutMs?: number;
  /** The environment of the runtime's command (default: the service's, as it is). */
  env?: Record<string, string>;
  /** Receives each output line (a build's progress). */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
}

/** Run `<bin> args` to its end; a runtime that cannot be started is exit 127. */
export async function runtimeCall(
  bin: string,
  args: readonly string[],
  options: CallOptions = {},
): Promise<CallResult> {
  const chunks = { stdout: [] as Uint8Array[], stderr: [] as Uint8Array[] };
  let proc;
  try {
    proc = spawnProcess([bin, ...args], {
      cwd: runtimeCwd(),
      env: options.env,
      clearEnv: options.env !== undefined,
      timeoutMs: options.timeoutMs ?? 60_000,
      signal: options.signal,
      graceMs: 2000,
      onOutput: (chunk, stream) => chunks[stream].push(chunk.slice()),
      onLine: options.onLine && ((line) => options.onLine!(line)),
    });
  } catch (e) {
    return { code: 127, stdout: "", stderr: `${bin}: ${(e as Error).message}`, timedOut: false };
  }
  const status = await proc.status;
  const text = (parts: Uint8Array[]) => new TextDecoder().decode(concatBytes(parts));
  return {
    code: status.code,
    stdout: text(chunks.stdout),
    stderr: text(chunks.stderr),
    timedOut: status.timedOut,
  };
}

/** The line of a failed call that says why. */
export function callError(r: CallResult): string {
  if (r.timedOut) return "it did not answer in time";
  return lastErrorLine(`${r.stderr}\n${r.stdout}`.split(/\r?\n/)) ?? `exit ${r.code}`;
}

/** How to get a runtime answering, by runtime. */
function answerFix(name: RuntimeName, rootless: boolean): string {
  return name === "docker"
    ? "start the Docker daemon (`sudo systemctl start docker`, or Docker Desktop) and make sure " +
      "this user may use it (the `docker` group or a rootless context), then `docker info`"
    : `make \`podman info\` work for this user${
      rootless ? " (rootless: subuids in /etc/subuid)" : ""
    }` +
      ": a broken storage or runtime set-up says why there; on hosts where crun cannot set " +
      'limits, set `[engine] runtime = "runc"` in /etc/containers/containers.conf';
}

/** What {@link askRuntime} reads from `<runtime> info`. Pure. */
function parseRuntimeInfo(
  name: RuntimeName,
  json: string,
): Omit<ContainerRuntime, "name" | "bin"> {
  // deno-lint-ignore no-explicit-any
  const info = JSON.parse(json) as any;
  if (name === "podman") {
    const host = info.host ?? {};
    return {
      version: String(info.version?.Version ?? "?"),
      rootless: host.security?.rootless === true,
      selinux: host.security?.selinuxEnabled === true,
      facts: `OCI runtime ${host.ociRuntime?.name ?? "?"}, cgroups ${host.cgroupVersion ?? "?"} (${
        host.cgroupManager ?? "?"
      }), storage ${info.store?.graphDriverName ?? "?"}`,
    };
  }
  const security: string[] = Array.isArray(info.SecurityOptions) ? info.SecurityOptions : [];
  return {
    version: String(info.ServerVersion ?? "?"),
    rootless: security.some((s) => s.includes("name=rootless")),
    selinux: security.some((s) => s.includes("name=selinux")),
    facts: `OCI runtime ${info.DefaultRuntime ?? "?"}, cgroups ${info.CgroupVersion ?? "?"} (${
      info.CgroupDriver ?? "?"
    }), storage ${info.Driver ?? "?"}`,
  };
}

/**
 * Find the runtime and ask it about itself; a {@link ContainerError} when there is none
 * (`no_runtime`) or it does not answer (`runtime_not_answering`).
 */
export async function askRuntime(
  preference: RuntimePreference,
  env: Record<string, string>,
): Promise<ContainerRuntime> {
  const found = findRuntime(preference, env);
  if (!found) {
    const wanted = preference === "auto" ? "podman or docker" : preference;
    throw new ContainerError(
      "no_runtime",
      `isolation: container needs a container runtime, and ${wanted} is not on PATH`,
      "install podman (Debian/Ubuntu: `apt-get install podman`; see docs/isolation.md) or " +
        "docker, or set `isolation: worktree` to run agents as host processes",
    );
  }
  const args = found.name === "podman"
    ? ["info", "--format", "json"]
    : ["info", "--format", "{{json .}}"];
  const r = await runtimeCall(found.bin, args, { timeoutMs: 30_000, env: runtimeEnvironment(env) });
  if (r.code !== 0) {
    throw new ContainerError(
      "runtime_not_answering",
      `${found.name} (${found.bin}) does not answer: \`${found.name} info\` failed: ${
        callError(r)
      }`,
      answerFix(found.name, false),
    );
  }
  try {
    return { ...found, ...parseRuntimeInfo(found.name, r.stdout) };
  } catch (e) {
    throw new ContainerError(
      "runtime_not_answering",
      `${found.name} info did not answer JSON: ${(e as Error).message}`,
      answerFix(found.name, false),
    );
  }
}
