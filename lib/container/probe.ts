/**
 * The probe of container isolation, run before `run_started` and by `doctor` (DESIGN.md §14):
 * the runtime is there and answers, the container's user can be non-root and write the
 * worktree, the image is there (or built, with `auto_build_image`), the hosts the restricted
 * network must reach can be relayed, and a trial container with the configured limits starts
 * and finds the agent's CLI and the tools the service needs. Any failure is a
 * {@link ContainerError} naming which and the fix; nothing else is spawned.
 */
import { ContainerError } from "./errors.ts";
import { type AgentImage, type CliRecipe, ensureImage } from "./image.ts";
import { agentNetworkShape, type NetworkTarget } from "./network.ts";
import { runArgs, type UserPlan, userPlan } from "./run_args.ts";
import {
  askRuntime,
  callError,
  type ContainerRuntime,
  findRuntime,
  runtimeCall,
  runtimeEnvironment,
  type RuntimeName,
} from "./runtime.ts";
import { hostPortText, unreachableHost } from "../util/host_port.ts";
import { type ContainerSettings, endpointHostPort } from "./settings.ts";

/** A model endpoint of an adapter: the variable that overrides it, and its default URL. */
export interface EndpointSpec {
  env: string;
  default?: string;
}

/** What the probe found: everything a session's containers are made from. */
export interface ContainerIsolation {
  /** `container:<runtime>:<image id>` (`task_claimed.isolation`). */
  label: string;
  runtime: ContainerRuntime;
  image: AgentImage;
  user: UserPlan;
  settings: ContainerSettings;
  /** The agent CLI inside the image. */
  binaryPath: string;
  /** The model endpoints and `allow_hosts` (each session adds its task server). */
  targets: NetworkTarget[];
}

/** Options of {@link probeIsolation}. */
export interface ProbeOptions {
  settings: ContainerSettings;
  /** The service's environment (the runtime's variables, the endpoint variables). */
  env: Record<string, string>;
  /** The agent CLI's command (`AgentAdapter.binary`). */
  binary: string;
  /** How the generated image installs the CLI. */
  cli?: CliRecipe;
  /** The adapter's model endpoints. */
  endpoints?: readonly EndpointSpec[];
  /** Receives progress (an image build's output). */
  onLine?: (line: string) => void;
  /** The service's ids (default: this process's). */
  ids?: { uid: number; gid: number };
  /** Build a missing generated image (default true; `doctor` only looks). */
  build?: boolean;
  /** The containers run agents (default true); false for a catalog install (see imageNeeds). */
  agent?: boolean;
}

/** The model endpoints under `env` and `allow_hosts`, as network targets. Pure. */
export function networkTargets(
  settings: ContainerSettings,
  endpoints: readonly EndpointSpec[],
  env: Record<string, string>,
): NetworkTarget[] {
  const targets: NetworkTarget[] = [];
  for (const e of endpoints) {
    const url = env[e.env] || e.default;
    if (!url) continue;
    const hp = endpointHostPort(url);
    if (!hp) {
      throw new ContainerError(
        "network_target",
        `${e.env}=${url} is not an http(s) URL the restricted network can relay`,
        `set ${e.env} to an http(s) URL, or agent_network: open`,
      );
    }
    targets.push({ ...hp, why: `model endpoint (${env[e.env] ? e.env : "its default"})` });
  }
  for (const h of settings.allowHosts) targets.push({ ...h, why: "allow_hosts" });
  if (settings.agentNetwork === "restricted") {
    for (const t of targets) {
      const why = unreachableHost(t.host);
      if (why) {
        throw new ContainerError(
          "network_target",
          `agent_network: restricted cannot relay ${hostPortText(t)} (${t.why}): ${why}`,
          "use a host name for it, or agent_network: open",
        );
      }
    }
  }
  return targets;
}

/** A command a session's container runs, and what for. */
export interface ImageNeed {
  command: string;
  why: string;
  /** The Debian package that gives it (none for the agent CLI: its recipe installs it). */
  pkg?: string;
}

/**
 * Every command a container runs besides `sh` (which runs the probe itself), so an image that
 * lacks one is refused before `run_started` instead of failing every attempt inside. Pure.
 * Every container's entry script needs `cat` and `mkdir`; an agent's session (`agent`, not a
 * catalog install) also needs git for its commits and, unless `agent_network: none`, `socat`
 * for the relays: every session relays its task server, under `restricted` and `open` alike.
 */
export function imageNeeds(
  settings: ContainerSettings,
  binary: string,
  agent = true,
): ImageNeed[] {
  const needs: ImageNeed[] = [
    { command: binary, why: agent ? "the agent CLI" : "the command to run" },
    {
      command: "cat",
      why: "the watchdog that ends the container with the service",
      pkg: "coreutils",
    },
    { command: "mkdir", why: "the home it makes", pkg: "coreutils" },
  ];
  if (!agent) return needs;
  needs.push({ command: "git", why: "the agent's commits on its branch", pkg: "git" });
  if (agentNetworkShape(settings.agentNetwork).relay !== "nothing") {
    needs.push(
      {
        command: "socat",
        why: `the relays of agent_network: ${settings.agentNetwork} to the task server` +
          (settings.agentNetwork === "restricted" ? " and the allowed hosts" : ""),
        pkg: "socat",
      },
      { command: "sleep", why: "waiting for the relays to listen", pkg: "coreutils" },
    );
  }
  return needs;
}

/** What a trial container is made from. */
interface Trial {
  runtime: Pick<ContainerRuntime, "name" | "bin">;
  image: AgentImage;
  user: UserPlan;
  settings: ContainerSettings;
}

/**
 * The container user `userPlan` will give once `<runtime> info` has answered, guessed from what
 * decides rootlessness locally (pure): podman is rootless exactly when it runs as a non-root
 * user, unless it talks to a remote service; docker is taken as rootful only on its default
 * socket. Undefined when it cannot be told, or the guessed set-up is refused anyway.
 */
export function guessUserPlan(
  runtime: RuntimeName,
  ids: { uid: number; gid: number },
  env: Record<string, string>,
): UserPlan | undefined {
  const remote = runtime === "podman"
    ? ["CONTAINER_HOST", "CONTAINER_CONNECTION"].some((k) => env[k])
    : ["DOCKER_HOST", "DOCKER_CONTEXT"].some((k) => env[k]);
  if (remote) return undefined;
  try {
    return userPlan({ runtime, rootless: runtime === "podman" && ids.uid !== 0, ...ids });
  } catch {
    return undefined;
  }
}

/** Words that say the runtime refused a limit. */
const LIMIT_WORDS = /memory|cpu|cgroup|rlimit|ulimit|swap|quota|pids/i;

/** Run the trial container; its output lines `have <cmd>=<path>`, `missing <cmd>`, `uid=<n>`. */
async function trialRun(
  iso: Trial,
  { binary, env, agent }: { binary: string; env: Record<string, string>; agent: boolean },
): Promise<{ binaryPath: string }> {
  const { runtime: rt, settings } = iso;
  const needs = imageNeeds(settings, binary, agent);
  const commands = needs.map((n) => n.command);
  const script = [
    'echo "uid=$(id -u 2>/dev/null || echo unknown)"',
    `for c in ${commands.map((c) => `'${c.replaceAll("'", "'\\''")}'`).join(" ")}; do ` +
    'p=$(command -v "$c" 2>/dev/null) && echo "have $c=$p" || echo "missing $c"; done',
  ].join("\n");
  const args = runArgs({
    runtime: rt.name,
    name: `service-probe-${crypto.randomUUID().slice(0, 12)}`,
    labels: { "io.service.probe": "1" },
    image: iso.image.ref,
    workdir: "/",
    mounts: [],
    envNames: [],
    envValues: {},
    user: iso.user,
    memoryMb: settings.memoryMb,
    cpuCores: settings.cpuCores,
    network: "none",
    addHosts: [],
    lowPorts: false,
    relabel: false,
    argv: ["sh", "-c", script],
  }).filter((a) => a !== "--interactive");
  const r = await runtimeCall(rt.bin, args, { env: runtimeEnvironment(env), timeoutMs: 120_000 });
  if (r.code !== 0 && !/^uid=/m.test(r.stdout)) {
    const line = callError(r);
    const limits = [
      settings.memoryMb === undefined ? "" : `memory_mb: ${settings.memoryMb}`,
      settings.cpuCores === undefined ? "" : `cpu_cores: ${settings.cpuCores}`,
    ].filter(Boolean).join(", ");
    if (LIMIT_WORDS.test(r.stderr)) {
      throw new ContainerError(
        "limits_refused",
        `${rt.name} refused the container's limits${limits ? ` (${limits})` : ""}: ${line}`,
        "raise memory_mb and cpu_cores to what the runtime allows (at least 64 MB, at most the " +
          "host's CPUs), and check its cgroup set-up (rootless podman needs cgroups v2 with the " +
          "memory and cpu controllers delegated); a ulimit above the host's hard limit is " +
          "refused: lower default_ulimits in containers.conf (docs/isolation.md)",
      );
    }
    if (lacksShell(r.stderr)) {
      throw new ContainerError(
        "image_incomplete",
        `image ${iso.image.ref} cannot run sh: ${line}`,
        "use an image with a POSIX sh (the entry script and setup commands run through it)",
      );
    }
    throw new ContainerError(
      "run_failed",
      `a trial container of ${iso.image.ref} did not start: ${line}`,
      `run it by hand to see why: ${rt.name} run --rm ${iso.image.ref} sh -c true`,
    );
  }
  const uid = /^uid=(\S+)/m.exec(r.stdout)?.[1];
  if (uid === "0") {
    throw new ContainerError(
      "user_mapping",
      `the trial container of ${iso.image.ref} ran as root although --user was given`,
      "check the runtime's user namespace set-up; the agent must not run as root",
    );
  }
  const missing = [...r.stdout.matchAll(/^missing (.+)$/gm)].map((m) => m[1]);
  if (missing.length > 0) {
    const lacks = needs.filter((n) => missing.includes(n.command));
    const names = lacks.map((n) => n.command).join(" and ");
    const packages = [...new Set(lacks.flatMap((n) => n.pkg ? [n.pkg] : []))];
    throw new ContainerError(
      "image_incomplete",
      `image ${iso.image.ref} lacks ${
        lacks.map((n) => `${n.command} (${n.why})`).join(", ")
      } on its PATH: every attempt would fail inside it`,
      settings.autoBuildImage
        ? `name the commands that install ${names} in container.install (docs/isolation.md)`
        : `add ${names} to the image${
          packages.length ? ` (Debian: apt-get install ${packages.join(" ")})` : ""
        }, or set auto_build_image: true to have the service build one with them`,
    );
  }
  const binaryPath = new RegExp(`^have ${escapeRegExp(binary)}=(.+)$`, "m").exec(r.stdout)?.[1];
  return { binaryPath: binaryPath ?? binary };
}

/**
 * Whether a runtime's words say the trial's `sh` could not be executed in the image — the OCI
 * runtime's exec error for it, not any "no such file or directory": a storage race of the
 * runtime's own (a layer another podman process was removing) says that too, and calling it an
 * image without a shell sent users to rebuild a good image.
 */
export function lacksShell(stderr: string): boolean {
  return /exec: "sh": (executable file not found|stat [^:\n]*: no such file or directory)/i.test(
    stderr,
  ) || /OCI runtime attempted to invoke a command that was not found/i.test(stderr);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Probe container isolation under `o.settings` (see the module's comment). `<runtime> info` is
 * the slowest call (it gathers every fact of the host's storage); what cannot change anything
 * runs beside it — the image lookup (never a build) and the trial container under the user
 * {@link guessUserPlan} expects — and is used only when info confirms the guess; otherwise it
 * runs again. Errors keep their order: the runtime's, then the image's, then the trial's.
 */
export async function probeIsolation(o: ProbeOptions): Promise<ContainerIsolation> {
  const ids = o.ids ?? { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 };
  const found = findRuntime(o.settings.runtime, o.env);
  const asking = askRuntime(o.settings.runtime, o.env);
  if (!found) await asking; // says why there is none
  const trialOptions = { binary: o.binary, env: o.env, agent: o.agent ?? true };
  const lookup = { env: o.env, cli: o.cli, build: false };
  const guess = found && guessUserPlan(found.name, ids, o.env);
  const early = found && ensureImage(found, o.settings, lookup);
  const earlyTrial = guess &&
    early?.then((image) =>
      trialRun({ runtime: found, image, user: guess, settings: o.settings }, trialOptions)
    );
  // Settled before any error is thrown: nothing of the probe outlives it.
  const settled = () => Promise.allSettled([early, earlyTrial]);
  early?.catch(() => {});
  earlyTrial?.catch(() => {});
  try {
    const runtime = await asking;
    const user = userPlan({ runtime: runtime.name, rootless: runtime.rootless, ...ids });
    const targets = networkTargets(o.settings, o.endpoints ?? [], o.env);
    let image: AgentImage | undefined = await early?.catch((e) => {
      // A generated image not built yet is built now (ensureImage says why it cannot be).
      const buildable = o.settings.autoBuildImage && o.build !== false;
      if (buildable && e instanceof ContainerError && e.kind === "image_missing") return undefined;
      throw e;
    });
    const looked = image !== undefined;
    image ??= await ensureImage(runtime, o.settings, {
      env: o.env,
      cli: o.cli,
      onLine: o.onLine,
      build: o.build,
    });
    const trial = { runtime, image, user, settings: o.settings };
    const same = looked && earlyTrial && JSON.stringify(guess) === JSON.stringify(user);
    const { binaryPath } = same ? await earlyTrial : await trialRun(trial, trialOptions);
    return {
      runtime,
      image,
      user,
      settings: o.settings,
      targets,
      binaryPath,
      label: `container:${runtime.name}:${image.id}`,
    };
  } catch (e) {
    await settled();
    throw e;
  }
}
