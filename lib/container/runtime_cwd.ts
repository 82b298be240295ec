/**
 * The working directory of the container runtime commands that have no directory of their own
 * (lib/container/launcher.ts gives a session's containers one, where it reads conmon's `oom` to
 * say that an agent ran out of memory). conmon, podman's container monitor, creates an empty file
 * named `oom` in its working directory — the `podman` command's — when the kernel's OOM killer
 * ends a process of its container. Started from the service's own directory (the checkout
 * `service run` runs in), an agent that exhausts its memory left that file in the user's
 * checkout, where `git add -A` takes it and a merge that adds a file of that name stops. In
 * `/proc` no one, not even root, can create a file, and podman reads no relative path there (the
 * service passes only absolute ones). Elsewhere (no conmon on the host) the runtime keeps the
 * service's directory.
 */

/** The directory to start a runtime command in (undefined: the service's own). */
export function runtimeCwd(): string | undefined {
  return Deno.build.os === "linux" ? "/proc" : undefined;
}
