/**
 * Kubernetes Jobs as the run's workers (DESIGN.md §17; docs/kubernetes.md). `service run` calls
 * {@link prepareKubernetes} before `run_started` — the cluster is reached and may list Jobs, the
 * clone URL is known — and the run loop starts the {@link Launcher} with it.
 */
import type { ServiceConfig } from "../config/schema.ts";
import type { KubernetesWorkersBlock } from "../config/kubernetes_schema.ts";
import { remoteUrl } from "../git/remote.ts";
import { connectCluster, type KubeApi, KubernetesSetupError } from "./api.ts";
import type { JobOwner } from "./manifest.ts";
import { runSelector } from "./names.ts";

export { Launcher, type LauncherOptions, type LaunchTask } from "./launcher.ts";
export { podIsolation } from "./manifest.ts";
export type { KubeApi } from "./api.ts";

/** A cluster the run may start Jobs in, checked. */
export interface PreparedCluster {
  settings: KubernetesWorkersBlock;
  api: KubeApi;
  /** `server.public_url`: where the pods reach the task server. */
  serverUrl: string;
  cloneUrl: string;
  memoryMb?: number;
  cpuCores?: number;
  owner?: JobOwner;
}

/** Options of {@link prepareKubernetes}. */
export interface PrepareOptions {
  root: string;
  env: Readonly<Record<string, string | undefined>>;
  out: (line: string) => void;
  /** The API to use instead of connecting (tests, the bench). */
  api?: KubeApi;
}

/**
 * Reach the cluster of `workers.kubernetes` and check that the Jobs can be listed there (a
 * missing Role fails now, with the fix, not mid-run); undefined when it is not configured.
 */
export async function prepareKubernetes(
  config: ServiceConfig,
  o: PrepareOptions,
): Promise<PreparedCluster | undefined> {
  const settings = config.workers.kubernetes;
  if (!settings) return undefined;
  const api = o.api ?? await connectCluster({ namespace: settings.namespace, env: o.env });
  try {
    await api.listJobs(runSelector("probe"));
  } catch (e) {
    throw new KubernetesSetupError(
      `workers.kubernetes: ${
        (e as Error).message
      } (cluster ${api.server}, namespace ${api.namespace})`,
      "give the orchestrator's service account the Role of deploy/ (jobs: create, list, " +
        "delete; pods: get, list) in that namespace, and check the cluster answers",
    );
  }
  const cloneUrl = settings.clone_url ??
    await remoteUrl({ root: o.root, remote: config.landing.remote });
  if (!cloneUrl) {
    throw new KubernetesSetupError(
      `workers.kubernetes: the workers need a repository to clone, and this checkout has no ` +
        `remote ${config.landing.remote}`,
      "set workers.kubernetes.clone_url, or `git remote add origin <url>`",
    );
  }
  let owner: JobOwner | undefined;
  const pod = o.env.SERVICE_POD_NAME;
  if (pod) {
    owner = await api.podOwner(pod).catch((e) => {
      o.out(`warning: Jobs get no owner (pod ${pod}: ${(e as Error).message})`);
      return undefined;
    });
  }
  o.out(
    `workers: Kubernetes Jobs in namespace ${api.namespace} of ${api.server} ` +
      `(at most ${settings.max_in_flight} at once, image ${settings.image})`,
  );
  return {
    settings,
    api,
    serverUrl: config.server.public_url!,
    cloneUrl,
    ...(config.memory_mb ? { memoryMb: config.memory_mb } : {}),
    ...(config.cpu_cores ? { cpuCores: config.cpu_cores } : {}),
    ...(owner ? { owner } : {}),
  };
}
