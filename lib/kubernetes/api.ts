/**
 * The launcher's edge to the Kubernetes API, through `@kubernetes/client-node` (loaded only when
 * `workers.kubernetes` is configured). The cluster is reached through the in-cluster service
 * account when the process runs in a pod, else `KUBECONFIG` (or `~/.kube/config`) and its
 * current context — so a test points a kubeconfig at a loopback fake. Only what the Role in
 * deploy/ grants is called: Jobs create, list, delete; pods list and get.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Job, Pod } from "./k8s_types.ts";
import { loadClientNode } from "./client_node.js";
import { UserFacingError } from "../errors.ts";
import type { ListedJob, ListedPod } from "./plan.ts";
import { RUN_ANNOTATION, SESSION_ANNOTATION, TASK_ANNOTATION } from "./names.ts";
import type { JobOwner } from "./manifest.ts";

/** What the launcher asks of the cluster. */
export interface KubeApi {
  /** The namespace the Jobs go to. */
  readonly namespace: string;
  /** The cluster's address, for messages. */
  readonly server: string;
  listJobs(labelSelector: string): Promise<ListedJob[]>;
  listPods(labelSelector: string): Promise<ListedPod[]>;
  /** Create `job`; an existing Job of that name is `KubeApiError` 409. */
  createJob(job: Job): Promise<void>;
  /** Delete Job `name` and, in the background, its pods (gone already: fine). */
  deleteJob(name: string): Promise<void>;
  /** The controller owning pod `name` (the orchestrator's StatefulSet), if any. */
  podOwner(name: string): Promise<JobOwner | undefined>;
}

/** The API server refused a request: its status, its `Status` reason and message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}

/** No cluster could be reached or configured. */
export class KubernetesSetupError extends UserFacingError {
  constructor(message: string, fix: string) {
    super(message, 1, fix);
    this.name = "KubernetesSetupError";
  }
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Options of {@link connectCluster}. */
export interface ConnectOptions {
  /** `workers.kubernetes.namespace`. */
  namespace?: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** Reach the cluster (in-cluster account, else the kubeconfig's current context). */
export async function connectCluster(o: ConnectOptions): Promise<KubeApi> {
  const k8s = await loadClientNode();
  const kc = new k8s.KubeConfig();
  const saDir = SERVICE_ACCOUNT_DIR;
  const inCluster = !!o.env.KUBERNETES_SERVICE_HOST && existsSync(join(saDir, "token"));
  const home = o.env.HOME ?? "";
  const kubeconfig = o.env.KUBECONFIG || (home ? join(home, ".kube", "config") : "");
  let namespace = o.namespace;
  if (inCluster) {
    kc.loadFromCluster();
    namespace ??= readFileSync(join(saDir, "namespace"), "utf8").trim() || undefined;
  } else if (kubeconfig && kubeconfig.split(":").some((f) => f && existsSync(f))) {
    try {
      // As kubectl reads KUBECONFIG: the files merged in order, the first one's context wins.
      const [first, ...more] = kubeconfig.split(":").filter((f) => f && existsSync(f));
      kc.loadFromFile(first);
      for (const file of more) {
        const next = new k8s.KubeConfig();
        next.loadFromFile(file);
        kc.mergeConfig(next);
      }
    } catch (e) {
      throw new KubernetesSetupError(
        `the kubeconfig ${kubeconfig} cannot be read: ${(e as Error).message}`,
        "fix the file, or point KUBECONFIG at a valid one (`kubectl config view` shows it)",
      );
    }
    const context = kc.getContextObject(kc.getCurrentContext());
    if (!context) {
      throw new KubernetesSetupError(
        `the kubeconfig ${kubeconfig} has no current context`,
        "kubectl config use-context <name>",
      );
    }
    namespace ??= context.namespace;
  } else {
    throw new KubernetesSetupError(
      "workers.kubernetes is configured but no cluster is reachable: this is not a pod with a " +
        "service account, and there is no KUBECONFIG or ~/.kube/config",
      "run the orchestrator in the cluster (deploy/), or export KUBECONFIG=<a kubeconfig " +
        "whose current context may create Jobs>",
    );
  }
  const ns = namespace ?? "default";
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const server = kc.getCurrentCluster()?.server ?? "?";
  return {
    namespace: ns,
    server,
    listJobs: (labelSelector) =>
      call("list Jobs", () => batch.listNamespacedJob({ namespace: ns, labelSelector }))
        .then((list) => list.items.map(listedJob)),
    listPods: (labelSelector) =>
      call("list pods", () => core.listNamespacedPod({ namespace: ns, labelSelector }))
        .then((list) => list.items.map(listedPod)),
    createJob: async (job) => {
      await call(
        `create Job ${job.metadata?.name}`,
        () => batch.createNamespacedJob({ namespace: ns, body: job }),
      );
    },
    deleteJob: async (name) => {
      try {
        await call(
          `delete Job ${name}`,
          () => batch.deleteNamespacedJob({ name, namespace: ns, propagationPolicy: "Background" }),
        );
      } catch (e) {
        if (e instanceof KubeApiError && e.status === 404) return;
        throw e;
      }
    },
    podOwner: async (name) => {
      const pod = await call(
        `get pod ${name}`,
        () => core.readNamespacedPod({ name, namespace: ns }),
      );
      const owner = pod.metadata?.ownerReferences?.find((r) => r.controller) ??
        pod.metadata?.ownerReferences?.[0];
      if (!owner?.uid) return undefined;
      return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid };
    },
  };
}

/** Run one API call; a refusal becomes a {@link KubeApiError} with the server's own words. */
async function call<T>(what: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (e) {
    const err = e as { code?: unknown; body?: unknown; message?: string };
    if (typeof err.code === "number") {
      let reason = "";
      let message = "";
      try {
        const status = JSON.parse(String(err.body)) as { reason?: string; message?: string };
        reason = status.reason ?? "";
        message = status.message ?? "";
      } catch {
        message = String(err.body ?? "").slice(0, 300);
      }
      throw new KubeApiError(
        err.code,
        reason,
        `${what}: the API server answered ${err.code}${reason ? ` ${reason}` : ""}` +
          `${message ? `: ${message}` : ""}`,
      );
    }
    throw new KubeApiError(0, "Unreachable", `${what}: ${err.message ?? String(e)}`);
  }
}

/** When a condition or timestamp happened (ms), if it did. */
function ms(when: Date | string | undefined): number | undefined {
  if (when === undefined) return undefined;
  const t = when instanceof Date ? when.getTime() : Date.parse(when);
  return Number.isFinite(t) ? t : undefined;
}

/** A listed Job as the plan reads it (its ids from its annotations). */
export function listedJob(job: Job): ListedJob {
  const a = job.metadata?.annotations ?? {};
  const conditions = job.status?.conditions ?? [];
  const ended = conditions.find((c) =>
    (c.type === "Complete" || c.type === "Failed") && c.status === "True"
  );
  const outcome = ended?.type === "Complete"
    ? "succeeded" as const
    : ended?.type === "Failed"
    ? "failed" as const
    : undefined;
  return {
    name: job.metadata?.name ?? "",
    runId: a[RUN_ANNOTATION] ?? "",
    taskId: a[TASK_ANNOTATION] ?? "",
    sessionId: a[SESSION_ANNOTATION] ?? "",
    ...(outcome ? { outcome } : {}),
    ...(ended
      ? {
        reason: [ended.reason, ended.message].filter(Boolean).join(": ") || undefined,
        finishedAt: ms(job.status?.completionTime) ?? ms(ended.lastTransitionTime),
      }
      : {}),
    deleting: job.metadata?.deletionTimestamp !== undefined,
  };
}

/** A listed pod: its Job, phase and the reason it waits or how it ended. */
export function listedPod(pod: Pod): ListedPod {
  const labels = pod.metadata?.labels ?? {};
  const state = pod.status?.containerStatuses?.[0]?.state;
  const reason = state?.terminated
    ? `${state.terminated.reason ?? "Terminated"} (exit ${state.terminated.exitCode})`
    : state?.waiting?.reason
    ? `${state.waiting.reason}${state.waiting.message ? `: ${state.waiting.message}` : ""}`
    : pod.status?.reason;
  return {
    name: pod.metadata?.name ?? "",
    job: labels["batch.kubernetes.io/job-name"] ?? labels["job-name"] ?? "",
    phase: pod.status?.phase ?? "Unknown",
    ...(reason ? { reason } : {}),
  };
}
