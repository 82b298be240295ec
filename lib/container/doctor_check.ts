/**
 * `doctor`'s isolation checks: under `isolation: container` the very probe `service run` makes
 * before `run_started` (lib/container/probe.ts), each step reported — the runtime, the image,
 * the container's user, the network the agent gets, its CLI inside the image — or the
 * `ContainerError` that stops a run, with its fix. Under `isolation: worktree` it says that
 * agents are host processes.
 */
import type { CheckResult } from "../check_result.ts";
import { ContainerError } from "./errors.ts";
import { agentNetworkShape, networkPlan, type NetworkTarget } from "./network.ts";
import { type EndpointSpec, imageNeeds, probeIsolation } from "./probe.ts";
import type { CliRecipe } from "./image.ts";
import { hostPortText } from "../util/host_port.ts";
import type { ContainerSettings } from "./settings.ts";

/** What the check needs to know of the configuration and the adapter. */
export interface IsolationCheckInput {
  isolation: "worktree" | "container";
  settings: ContainerSettings;
  binary: string;
  cli?: CliRecipe;
  endpoints?: readonly EndpointSpec[];
  env: Record<string, string>;
}

function reach(settings: ContainerSettings, targets: NetworkTarget[]): string {
  const server = { host: "127.0.0.1", port: 0, why: "task server" };
  const plan = networkPlan(agentNetworkShape(settings.agentNetwork), [server, ...targets]);
  const listed = plan.relays.map((r) =>
    r.target.port === 0 ? "the task server" : `${hostPortText(r.target)} (${r.target.why})`
  );
  switch (settings.agentNetwork) {
    case "none":
      return "none: the agent reaches nothing, not even the task server (it cannot report)";
    case "open":
      return `open: the runtime's default network, and ${listed.join(", ") || "the task server"}`;
    case "restricted":
      return `restricted: only ${[...new Set(listed)].join(", ")}`;
  }
}

/** The isolation checks (a probe of the runtime under `isolation: container`). */
export async function isolationChecks(input: IsolationCheckInput): Promise<CheckResult[]> {
  if (input.isolation !== "container") {
    return [{
      name: "isolation",
      ok: true,
      detail: "worktree: agents run as host processes in their own worktrees " +
        "(docs/isolation.md: what this does and does not protect against)",
    }];
  }
  const s = input.settings;
  try {
    const iso = await probeIsolation({
      settings: s,
      env: input.env,
      binary: input.binary,
      cli: input.cli,
      endpoints: input.endpoints,
      build: false,
    });
    const rt = iso.runtime;
    return [
      {
        name: "container runtime",
        ok: true,
        detail: `${rt.name} ${rt.version} at ${rt.bin} (${
          rt.rootless ? "rootless" : "rootful"
        }; ${rt.facts})`,
      },
      {
        name: "agent image",
        ok: true,
        detail: `${iso.image.ref} (${iso.image.id.slice(0, 12)}); ${input.binary} at ` +
          `${iso.binaryPath} inside, and ${
            imageNeeds(s, input.binary).slice(1).map((n) => n.command).join(", ")
          }`,
      },
      {
        name: "container limits",
        ok: true,
        detail: `memory ${s.memoryMb === undefined ? "unlimited" : `${s.memoryMb} MB`}, CPUs ${
          s.cpuCores ?? "unlimited"
        }; a trial container started with them`,
        ...(s.memoryMb === undefined || s.cpuCores === undefined
          ? {
            warning: true,
            fix: "set memory_mb and cpu_cores so one agent cannot take the host's memory or CPUs",
          }
          : {}),
      },
      {
        name: "container user",
        ok: true,
        detail: iso.user.chown
          ? `uid ${iso.user.uid} (the service runs as root: the worktree and the session's git ` +
            "files are handed to it while the container runs)"
          : `uid ${iso.user.uid}, the service's own (${iso.user.args.join(" ")})`,
      },
      {
        name: "agent network",
        ok: true,
        detail: `${reach(s, iso.targets)}; phase 1 (setup) ${
          s.setupNetwork ? "has the runtime's default network" : "has no network"
        }`,
      },
    ];
  } catch (e) {
    if (!(e instanceof ContainerError)) throw e;
    const pending = e.kind === "image_missing" && s.autoBuildImage;
    return [{
      name: `isolation (${e.kind.replaceAll("_", " ")})`,
      ok: pending,
      ...(pending ? { warning: true } : {}),
      detail: `ContainerError: ${e.message}`,
      fix: e.fix,
    }];
  }
}
