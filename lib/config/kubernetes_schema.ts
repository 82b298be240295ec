/**
 * `workers.kubernetes` of service.yaml (DESIGN.md §17; docs/kubernetes.md): the orchestrator
 * starts one `batch/v1` Job per ready task, each running `service worker --once` bound to that
 * task by a one-time ticket. Names that reach the Kubernetes API are checked here by the API
 * server's own rules (DNS-1123 labels and subdomains, label keys and values, quantities), so a
 * mistake is a configuration error naming the key, not a 422 from the cluster mid-run.
 */
import { z } from "zod";

/** A DNS-1123 label (namespaces, Secret keys are not: see {@link SECRET_KEY}). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS-1123 subdomain (Secret, ServiceAccount, RuntimeClass names). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A key in a Secret's data. */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
/** The name part of a label key, and a non-empty label value. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** A resource quantity as the API server parses it (`500m`, `2`, `1.5Gi`, `512Mi`). */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

const namespace = z.string().max(63).regex(
  DNS_LABEL,
  "must be a namespace name: lower-case letters, digits and '-', at most 63",
);
const objectName = z.string().max(253).regex(
  DNS_SUBDOMAIN,
  "must be a Kubernetes object name: lower-case letters, digits, '-' and '.'",
);

/** A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63. */
const labelKey = z.string().refine((key) => {
  const slash = key.lastIndexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}, "must be a label key like kubernetes.io/arch or pool");
const labelValue = z.string().max(63).refine(
  (v) => v === "" || LABEL_NAME.test(v),
  "must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending " +
    "with a letter or digit",
);

const quantity = z.union([
  z.string().regex(QUANTITY, "must be a quantity like 500m, 2, 512Mi or 4Gi"),
  z.number().positive(),
]).transform(String);

const ResourceListSchema = z.strictObject({
  cpu: quantity.optional(),
  memory: quantity.optional(),
  "ephemeral-storage": quantity.optional(),
});

/** Requests and limits of a worker pod's container (Kubernetes' own spelling). */
const ResourcesSchema = z.strictObject({
  requests: ResourceListSchema.optional(),
  limits: ResourceListSchema.optional(),
});

/** One toleration of the worker pods (Kubernetes' own spelling, as in a pod spec). */
const TolerationSchema = z.strictObject({
  key: labelKey.optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: labelValue.optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.number().int().optional(),
});

/** `workers.kubernetes`. */
export const KubernetesWorkersSchema = z.strictObject({
  /** Where the Jobs go (default: the orchestrator's own namespace in a cluster, else the context's). */
  namespace: namespace.optional(),
  /** The worker image: the service with git and the agent CLIs (deploy/Containerfile). */
  image: z.string().min(1).regex(/^[^\s]+$/, "must be an image reference without spaces"),
  image_pull_policy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
  /** The worker pods' service account (they need no Kubernetes API rights; default: none mounted). */
  service_account: objectName.optional(),
  /** The Secret whose `token_key` holds the workers' token (scope `worker`: it only claims). */
  token_secret: objectName,
  token_key: z.string().regex(SECRET_KEY, "must be a Secret key").default("token"),
  /**
   * A Secret with the git credentials the workers clone and push with (`.git-credentials` for
   * HTTPS, or `ssh-privatekey` and `known_hosts`): a bot or deploy key that may push only `agent/*`.
   */
  git_secret: objectName.optional(),
  /** Secrets whose keys become the workers' environment (the agents' provider keys). */
  env_secrets: z.array(objectName).max(20).default([]),
  /** The repository the workers clone (default: the URL of `landing.remote` in this checkout). */
  clone_url: z.string().min(1).regex(/^[^\s]+$/, "must be a URL without spaces").optional(),
  /** Requests and limits by role (`default` for roles not listed; limits default to memory_mb/cpu_cores). */
  resources: z.record(
    z.string().regex(/^[a-z][a-z0-9_-]*$/, "must be a role name or default"),
    ResourcesSchema,
  ).default({}),
  node_selector: z.record(labelKey, labelValue).default({}),
  tolerations: z.array(TolerationSchema).max(50).default([]),
  /** `runtimeClassName` of the worker pods: a sandboxed runtime such as gVisor or Kata. */
  runtime_class: objectName.optional(),
  /** Jobs at once (counted by listing them, never remembered). */
  max_in_flight: z.number().int().min(1).max(10_000).default(10),
  /** A Job's wall-clock limit (default: the task's agent timeout plus 15 minutes). */
  active_deadline_s: z.number().int().min(60).optional(),
  /** How long a finished Job stays for `kubectl logs` before the cluster (or the orchestrator) deletes it. */
  ttl_after_finished_s: z.number().int().min(0).default(3600),
  /** Seconds between looks at the run's Jobs. */
  poll_interval_s: z.number().min(0.2).max(60).default(2),
  /** Seconds a worker pod may drain after SIGTERM (its `terminationGracePeriodSeconds` adds 15). */
  drain_timeout_s: z.number().int().min(1).max(3600).default(25),
});

/** `workers`: agents beyond this machine's own. */
export const WorkersSchema = z.strictObject({
  kubernetes: KubernetesWorkersSchema.optional(),
});

/** The validated `workers.kubernetes` block. */
export type KubernetesWorkersBlock = z.output<typeof KubernetesWorkersSchema>;
