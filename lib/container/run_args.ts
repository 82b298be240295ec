/**
 * The argv of `<runtime> run` for one container of a session (pure): its name and labels, the
 * bind mounts and nothing else of the host, the user, the limits, the network, no capabilities
 * and no privilege gain, an init that passes signals on, and the command.
 */
import { ContainerError } from "./errors.ts";
import type { RuntimeName } from "./runtime.ts";

/** A non-root user the container runs as, and whether the service must hand it the worktree. */
export interface UserPlan {
  /** `--user`/`--userns` arguments. */
  args: string[];
  uid: number;
  gid: number;
  /**
   * The service runs as root: the container's user is {@link CONTAINER_UID}, and the worktree
   * and the session's git files are handed to it (chown) while the container runs.
   */
  chown: boolean;
}

/** The container user when the service runs as root (the distroless images' `nonroot`). */
export const CONTAINER_UID = 65532;

/** What decides the container's user. */
export interface UserFacts {
  runtime: RuntimeName;
  rootless: boolean;
  /** The service's uid and gid (the owner of the worktrees it makes). */
  uid: number;
  gid: number;
}

/**
 * The container's user (DESIGN.md §14: not root, and it can write the worktree and the git
 * files): rootless podman keeps the service's ids (`--userns=keep-id`); a rootful runtime runs
 * as the service's ids, or as {@link CONTAINER_UID} when the service is root. Rootless docker
 * maps every container user but root to ids that cannot write the worktree: refused.
 */
export function userPlan(f: UserFacts): UserPlan {
  if (f.rootless && f.runtime === "podman") {
    return { args: ["--userns=keep-id", "--user", `${f.uid}:${f.gid}`], ...f, chown: false };
  }
  if (f.rootless) {
    throw new ContainerError(
      "user_mapping",
      "rootless docker runs a container's non-root users as subordinate ids that cannot write " +
        "the worktree, and the agent must not run as root",
      "use podman (rootless: `--userns=keep-id`) or a rootful docker daemon",
    );
  }
  if (f.uid !== 0) return { args: ["--user", `${f.uid}:${f.gid}`], ...f, chown: false };
  return {
    args: ["--user", `${CONTAINER_UID}:${CONTAINER_UID}`],
    uid: CONTAINER_UID,
    gid: CONTAINER_UID,
    chown: true,
  };
}

/** One bind mount; the target is the source's own path unless named. */
export interface Mount {
  source: string;
  target?: string;
  readOnly: boolean;
}

/** One container of a session, as `<runtime> run` starts it. */
export interface RunSpec {
  runtime: RuntimeName;
  name: string;
  labels: Readonly<Record<string, string>>;
  image: string;
  workdir: string;
  mounts: readonly Mount[];
  /** Variables whose values the runtime's command passes on from its own environment. */
  envNames: readonly string[];
  /** Variables set to these (non-secret) values. */
  envValues: Readonly<Record<string, string>>;
  user: UserPlan;
  memoryMb?: number;
  cpuCores?: number;
  /** `none`, or the runtime's default network. */
  network: "none" | "default";
  /** `/etc/hosts` entries (names the restricted network relays). */
  addHosts: readonly { name: string; ip: string }[];
  /** Let the user bind ports below 1024 in the container's own network namespace. */
  lowPorts: boolean;
  /** podman ends the container after this many seconds, whatever happens to the service. */
  maxSeconds?: number;
  /** SELinux: relabel the mounts for the container (`z`). */
  relabel: boolean;
  /** The command inside the container. */
  argv: readonly string[];
  /**
   * podman only: where conmon writes its PID, and the container writes straight into the
   * runtime command's own output pipes (`--log-driver passthrough`), so that its death and the
   * end of its output are known before its teardown ends (lib/container/death_watch.ts).
   */
  conmonPidfile?: string;
}

/** A path a bind mount cannot carry (`-v` splits on `:`; a comma breaks `--mount`). */
function checkPath(path: string): string {
  if (path.includes(":") || path.includes(",") || path.includes("\n")) {
    throw new ContainerError(
      "run_failed",
      `cannot mount ${JSON.stringify(path)} into a container: the path holds ':' or ','`,
      "move the repository to a path without ':' or ','",
    );
  }
  return path;
}

/** Processes one container may have at once. */
const PIDS_LIMIT = 4096;

/** The argv after the runtime's command: `run … <image> <argv>`. */
export function runArgs(spec: RunSpec): string[] {
  const args = [
    "run",
    "--rm",
    "--interactive", // stdin stays open while the service lives: the watchdog of entry.ts
    "--init",
    "--name",
    spec.name,
    "--pull",
    "never",
    "--cap-drop",
    "all",
    "--security-opt",
    "no-new-privileges",
    // A fork bomb ends at its own container (docker sets no limit of its own).
    "--pids-limit",
    String(PIDS_LIMIT),
  ];
  if (spec.conmonPidfile !== undefined && spec.runtime === "podman") {
    args.push("--log-driver", "passthrough", "--conmon-pidfile", checkPath(spec.conmonPidfile));
  }
  for (const [k, v] of Object.entries(spec.labels)) args.push("--label", `${k}=${v}`);
  args.push(...spec.user.args);
  if (spec.memoryMb !== undefined) {
    // Swap equal to memory: the limit is the limit, not twice it.
    args.push("--memory", `${spec.memoryMb}m`, "--memory-swap", `${spec.memoryMb}m`);
  }
  if (spec.cpuCores !== undefined) args.push("--cpus", String(spec.cpuCores));
  if (spec.network === "none") args.push("--network", "none"); // else the runtime's default
  if (spec.lowPorts) args.push("--sysctl", "net.ipv4.ip_unprivileged_port_start=0");
  for (const h of spec.addHosts) args.push("--add-host", `${h.name}:${h.ip}`);
  if (spec.maxSeconds !== undefined && spec.runtime === "podman") {
    args.push("--timeout", String(Math.ceil(spec.maxSeconds)));
  }
  for (const m of spec.mounts) {
    const options = [m.readOnly ? "ro" : "rw", ...(spec.relabel ? ["z"] : [])].join(",");
    args.push("--volume", `${checkPath(m.source)}:${checkPath(m.target ?? m.source)}:${options}`);
  }
  for (const name of spec.envNames) args.push("--env", name);
  for (const [k, v] of Object.entries(spec.envValues)) args.push("--env", `${k}=${v}`);
  args.push("--workdir", checkPath(spec.workdir), spec.image, ...spec.argv);
  return args;
}
