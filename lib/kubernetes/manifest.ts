/**
 * The `batch/v1` Job of one task (pure; DESIGN.md §17). Its pod runs
 * `service worker --once --server <public_url> --ticket <ticket>` as a non-root user with no
 * capabilities, no privilege escalation and a read-only root file system (its clone, home and
 * temporary files are emptyDirs), limited by the role's resources (else `memory_mb` and
 * `cpu_cores`); the workers' token is mounted from its Secret, never put in the arguments. The
 * pod is the agent's boundary: `task_claimed` journals `isolation: "pod:<image>"`.
 * `backoffLimit: 0`, because the service, not the Job controller, decides on a new attempt.
 */
import type { Container, EnvVar, Job, ResourceRequirements, Volume } from "./k8s_types.ts";
import type { KubernetesWorkersBlock } from "../config/kubernetes_schema.ts";
import {
  jobName,
  labelValue,
  ROLE_LABEL,
  RUN_ANNOTATION,
  RUN_LABEL,
  SESSION_ANNOTATION,
  SESSION_LABEL,
  TASK_ANNOTATION,
  TASK_LABEL,
} from "./names.ts";

/** The uid and gid the worker pods run as (the image's `service` user). */
export const WORKER_UID = 10001;
/** Where a worker pod's clone lives (an emptyDir). */
export const CLONE_DIR = "/work/repo";
/** Where the workers' token is mounted. */
export const TOKEN_DIR = "/var/run/service/token";
/** Where the git credentials are mounted. */
export const GIT_DIR = "/var/run/service/git";

/** The Job's owner: the orchestrator's StatefulSet, so uninstalling it removes its Jobs. */
export interface JobOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** Everything one Job is made of. */
export interface JobInput {
  settings: KubernetesWorkersBlock;
  namespace: string;
  runId: string;
  taskId: string;
  role: string;
  sessionId: string;
  ticket: string;
  /** `server.public_url`: where the pod reaches the task server. */
  serverUrl: string;
  /** The repository the pod clones. */
  cloneUrl: string;
  /** The Job's wall-clock limit (s). */
  activeDeadlineS: number;
  /** `memory_mb` and `cpu_cores`: the default limits. */
  memoryMb?: number;
  cpuCores?: number;
  owner?: JobOwner;
}

/** `pod:<image>`: where a Job's agent runs, as `task_claimed` journals it. */
export function podIsolation(image: string): string {
  return `pod:${image}`;
}

/** The role's requests and limits: its own, else `default`'s, limits else memory_mb/cpu_cores. */
export function resourcesFor(
  settings: KubernetesWorkersBlock,
  role: string,
  defaults: { memoryMb?: number; cpuCores?: number },
): ResourceRequirements | undefined {
  const own = settings.resources[role] ?? settings.resources.default ?? {};
  const limits: Record<string, string> = { ...own.limits };
  if (limits.memory === undefined && defaults.memoryMb) limits.memory = `${defaults.memoryMb}Mi`;
  if (limits.cpu === undefined && defaults.cpuCores) limits.cpu = String(defaults.cpuCores);
  const out: ResourceRequirements = {};
  if (own.requests && Object.keys(own.requests).length > 0) out.requests = { ...own.requests };
  if (Object.keys(limits).length > 0) out.limits = limits;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The Job body for `input` (what `createNamespacedJob` sends). */
export function jobManifest(input: JobInput): Job {
  const s = input.settings;
  const labels = {
    "app.kubernetes.io/name": "service-worker",
    "app.kubernetes.io/component": "worker",
    "app.kubernetes.io/managed-by": "service",
    [RUN_LABEL]: labelValue(input.runId),
    [TASK_LABEL]: labelValue(input.taskId),
    [SESSION_LABEL]: labelValue(input.sessionId),
    [ROLE_LABEL]: labelValue(input.role),
  };
  const annotations = {
    [RUN_ANNOTATION]: input.runId,
    [TASK_ANNOTATION]: input.taskId,
    [SESSION_ANNOTATION]: input.sessionId,
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: jobName(input.taskId, input.sessionId),
      namespace: input.namespace,
      labels,
      annotations,
      ...(input.owner
        ? {
          ownerReferences: [{
            ...input.owner,
            controller: false,
            blockOwnerDeletion: false,
          }],
        }
        : {}),
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: input.activeDeadlineS,
      ttlSecondsAfterFinished: s.ttl_after_finished_s,
      template: {
        metadata: { labels, annotations },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...(s.service_account ? { serviceAccountName: s.service_account } : {}),
          ...(s.runtime_class ? { runtimeClassName: s.runtime_class } : {}),
          ...(Object.keys(s.node_selector).length > 0 ? { nodeSelector: s.node_selector } : {}),
          ...(s.tolerations.length > 0 ? { tolerations: s.tolerations } : {}),
          terminationGracePeriodSeconds: s.drain_timeout_s + 15,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: WORKER_UID,
            runAsGroup: WORKER_UID,
            fsGroup: WORKER_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [workerContainer(input)],
          volumes: podVolumes(s),
        },
      },
    },
  };
}

/** Git's credentials from the mounted Secret: HTTPS (a credential store) or SSH. */
function gitEnv(s: KubernetesWorkersBlock): EnvVar[] {
  if (!s.git_secret) return [];
  return [
    { name: "GIT_CONFIG_COUNT", value: "2" },
    { name: "GIT_CONFIG_KEY_0", value: "credential.helper" },
    { name: "GIT_CONFIG_VALUE_0", value: `store --file=${GIT_DIR}/.git-credentials` },
    { name: "GIT_CONFIG_KEY_1", value: "core.sshCommand" },
    {
      name: "GIT_CONFIG_VALUE_1",
      value: `ssh -i ${GIT_DIR}/ssh-privatekey -o UserKnownHostsFile=${GIT_DIR}/known_hosts ` +
        "-o IdentitiesOnly=yes",
    },
  ];
}

/** The one container: `service worker --once` bound to its task by the ticket. */
function workerContainer(input: JobInput): Container {
  const s = input.settings;
  const resources = resourcesFor(s, input.role, input);
  return {
    name: "worker",
    image: s.image,
    ...(s.image_pull_policy ? { imagePullPolicy: s.image_pull_policy } : {}),
    // The image's entrypoint is `service` (behind tini: deploy/Containerfile).
    args: [
      "worker",
      "--once",
      "--server",
      input.serverUrl,
      "--ticket",
      input.ticket,
      "--name",
      "$(POD_NAME)",
      "--clone",
      input.cloneUrl,
      "--dir",
      CLONE_DIR,
      "--drain-timeout",
      String(s.drain_timeout_s),
    ],
    env: [
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "SERVICE_TOKEN_FILE", value: `${TOKEN_DIR}/token` },
      { name: "HOME", value: "/home/service" },
      { name: "TMPDIR", value: "/tmp" },
      ...gitEnv(s),
    ],
    ...(s.env_secrets.length > 0
      ? { envFrom: s.env_secrets.map((secret) => ({ secretRef: { name: secret } })) }
      : {}),
    ...(resources ? { resources } : {}),
    securityContext: {
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    },
    volumeMounts: [
      { name: "work", mountPath: "/work" },
      { name: "home", mountPath: "/home/service" },
      { name: "tmp", mountPath: "/tmp" },
      { name: "token", mountPath: TOKEN_DIR, readOnly: true },
      ...(s.git_secret ? [{ name: "git", mountPath: GIT_DIR, readOnly: true }] : []),
    ],
  };
}

/** Its writable directories (emptyDirs; the root file system is read-only) and its Secrets. */
function podVolumes(s: KubernetesWorkersBlock): Volume[] {
  return [
    { name: "work", emptyDir: {} },
    { name: "home", emptyDir: {} },
    { name: "tmp", emptyDir: {} },
    {
      name: "token",
      secret: {
        secretName: s.token_secret,
        items: [{ key: s.token_key, path: "token" }],
        // Owned by root, readable by the pod's group (fsGroup), nobody else.
        defaultMode: 0o440,
      },
    },
    ...(s.git_secret
      ? [{ name: "git", secret: { secretName: s.git_secret, defaultMode: 0o440 } }]
      : []),
  ];
}
