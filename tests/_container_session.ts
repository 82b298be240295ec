/**
 * A podman container session on the test image, as the container tests use it: a
 * repository, a sealed worktree of the session and its prepared container (lib/container).
 */
import { join } from "node:path";
import { createWorktree } from "../lib/worktrees/worktrees.ts";
import { sealWorktree } from "../lib/worktrees/trees.ts";
import { type ContainerIsolation, probeIsolation } from "../lib/container/probe.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { prepareSessionContainer, type SessionContainer } from "../lib/container/session.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { sh } from "./_e2e.ts";
import { testImage } from "./_container_image.ts";

const image = await testImage();

let probed: ContainerIsolation | undefined;
/** The container isolation of the test image, probed once per test process. */
async function isolation(): Promise<ContainerIsolation> {
  if (!image.ok) throw new Error("no runtime");
  probed ??= await probeIsolation({
    settings: containerSettings(ServiceConfigSchema.parse({
      cli: "generic",
      roles: { backend: {} },
      isolation: "container",
      container: { image: image.ref },
    })),
    env: Deno.env.toObject(),
    binary: "sh",
  });
  return probed;
}

/** A repository, a sealed worktree of session `sessionId` and its prepared container. */
export async function session(dir: string, sessionId: string): Promise<{
  box: SessionContainer;
  tree: string;
}> {
  if (!image.ok) throw new Error("no runtime");
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "t@localhost");
  await sh(dir, "config", "user.name", "t");
  await Deno.writeTextFile(join(dir, "README.md"), "# death\n");
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
  const wt = await createWorktree(dir, sessionId, (await sh(dir, "rev-parse", "HEAD")).trim());
  const box = await prepareSessionContainer({
    iso: await isolation(),
    root: dir,
    runtimeDir: join(dir, ".sdd", "runtime"),
    runId: "r-death",
    sessionId,
    admin: await sealWorktree(dir, sessionId),
    branch: wt.branch,
    serverUrl: "http://127.0.0.1:9/",
    env: { LANG: "C.UTF-8" },
    processEnv: Deno.env.toObject(),
    warn: () => {},
  });
  return { box, tree: wt.path };
}
