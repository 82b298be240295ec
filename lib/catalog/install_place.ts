/**
 * Where a catalog entry's install command runs (`mcp_catalog.isolation`, docs/mcp.md): `host`
 * as a host process; `container` in a throwaway container of the agent image (DESIGN.md §14:
 * `container.image`, or the generated one with `auto_build_image`) on the runtime's default
 * network (an install downloads), its temporary directory the only host path mounted, its user
 * not root, the configured limits — refused with a `ContainerError` when that cannot be had;
 * `auto` (default) a container when a runtime is on PATH and an image is configured, else the
 * host, and the preview says which and why.
 */
import { type ContainerConfigKeys, containerSettings } from "../container/settings.ts";
import { ContainerError } from "../container/errors.ts";
import { containerLauncher } from "../container/launcher.ts";
import { type ContainerIsolation, probeIsolation } from "../container/probe.ts";
import { findRuntime, runtimeEnvironment } from "../container/runtime.ts";
import { containerEnvironment } from "../container/session.ts";
import type { Launcher } from "../process/launcher.ts";

/** `mcp_catalog.isolation`. */
export type InstallIsolation = "auto" | "container" | "host";

/** Where installs run, and the words the preview says it with. */
export type InstallPlace =
  | { kind: "host"; words: string }
  | { kind: "container"; iso: ContainerIsolation; words: string };

/** The keys of service.yaml {@link installPlace} reads (absent: no service.yaml). */
export type InstallPlaceConfig = ContainerConfigKeys & {
  mcp_catalog?: { isolation: InstallIsolation };
};

/** The default `container` block (no service.yaml). */
const NO_CONFIG: ContainerConfigKeys = {
  auto_build_image: false,
  container: {
    runtime: "auto",
    base_image: "debian:bookworm-slim",
    install: [],
    setup_network: true,
    agent_network: "open",
    allow_hosts: [],
  },
};

/**
 * Where the install command `binary …` runs under `config`; a {@link ContainerError} when a
 * container is required or a runtime is there, and it cannot be had.
 */
export async function installPlace(
  config: InstallPlaceConfig | undefined,
  binary: string,
  env: Record<string, string>,
): Promise<InstallPlace> {
  const mode = config?.mcp_catalog?.isolation ?? "auto";
  if (mode === "host") {
    return {
      kind: "host",
      words: "on this machine, as a host process (mcp_catalog.isolation: host)",
    };
  }
  // An install reaches the network as it must; no model endpoint or relay is involved.
  const settings = { ...containerSettings(config ?? NO_CONFIG), agentNetwork: "open" as const };
  settings.allowHosts = [];
  if (mode === "auto") {
    if (!findRuntime(settings.runtime, env)) {
      return {
        kind: "host",
        words: "on this machine, as a host process: no container runtime (podman or docker) is " +
          "on PATH (docs/isolation.md sets one up; mcp_catalog.isolation: container requires it)",
      };
    }
    if (!settings.image && !settings.autoBuildImage) {
      return {
        kind: "host",
        words: "on this machine, as a host process: no container image is configured " +
          "(container.image or auto_build_image in service.yaml)",
      };
    }
  }
  try {
    const iso = await probeIsolation({ settings, env, binary, agent: false });
    return {
      kind: "container",
      iso,
      words: `in a throwaway ${iso.runtime.name} container of ${iso.image.ref} (user ` +
        `${iso.user.uid}, the runtime's default network; nothing of this machine is mounted but ` +
        "its temporary directory)",
    };
  } catch (e) {
    if (!(e instanceof ContainerError)) throw e;
    throw new ContainerError(
      e.kind,
      `catalog installs run in a container here, and it cannot be had: ${e.message}`,
      `${e.fix}; or set mcp_catalog.isolation: host in service.yaml to install on this machine`,
    );
  }
}

/** The environments of {@link installContainer}. */
export interface InstallContainerOptions {
  /** The install command's environment (already scrubbed). */
  env: Record<string, string>;
  /** This process's environment (what the container runtime itself runs with). */
  processEnv: Record<string, string>;
}

/** The launcher and environment of one install in `dir` (the command's working directory). */
export async function installContainer(
  iso: ContainerIsolation,
  dir: string,
  { env, processEnv }: InstallContainerOptions,
): Promise<{ launcher: Launcher; env: Record<string, string> }> {
  if (iso.user.chown) await Deno.chown(dir, iso.user.uid, iso.user.gid);
  const name = `service-mcp-install-${crypto.randomUUID().slice(0, 8)}`;
  const launcher = containerLauncher({
    runtime: iso.runtime,
    runtimeEnv: runtimeEnvironment(processEnv),
    base: {
      runtime: iso.runtime.name,
      labels: { "io.service.phase": "mcp-install" },
      image: iso.image.ref,
      mounts: [{ source: dir, readOnly: false }],
      user: iso.user,
      memoryMb: iso.settings.memoryMb,
      cpuCores: iso.settings.cpuCores,
      network: "default",
      addHosts: [],
      lowPorts: false,
      relabel: iso.runtime.selinux,
    },
    relays: [],
    name: () => name,
  });
  return { launcher, env: containerEnvironment(env, { network: "default" }) };
}
