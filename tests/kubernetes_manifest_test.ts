/**
 * The Job the launcher sends, checked before client-node serializes it (its serializer drops a
 * field it does not know, so a misspelt field would vanish silently rather than fail): every
 * variant of `workers.kubernetes` yields a body the OpenAPI schemas accept, with the pod as
 * the agent's boundary (non-root, no capabilities, no privilege escalation, read-only root).
 */
import assert from "node:assert/strict";
import { schemaErrors } from "./fakes/kube_validate.ts";
import { type JobInput, jobManifest } from "../lib/kubernetes/manifest.ts";
import { KubernetesWorkersSchema } from "../lib/config/kubernetes_schema.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function input(settings: Record<string, unknown>, over: Partial<JobInput> = {}): JobInput {
  return {
    settings: KubernetesWorkersSchema.parse({
      image: "registry.example/service:1",
      token_secret: "worker-token",
      ...settings,
    }),
    namespace: "agents",
    runId: "r-20260101-ab12",
    taskId: "T_1.api",
    role: "backend",
    sessionId: "s-ab12-001-ffff",
    ticket: "svctkt_abc",
    serverUrl: "http://orchestrator.agents.svc:8052",
    cloneUrl: "https://git.example/shop.git",
    activeDeadlineS: 4500,
    ...over,
  };
}

Deno.test("jobManifest(): every configuration yields a Job the OpenAPI schemas accept", () => {
  const variants: Record<string, unknown>[] = [
    {},
    { namespace: "agents", image_pull_policy: "Always", service_account: "service-worker" },
    { git_secret: "git-credentials", env_secrets: ["provider-keys", "more-keys"] },
    {
      resources: {
        backend: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: 2, memory: "4Gi" } },
      },
    },
    { resources: { default: { limits: { "ephemeral-storage": "10Gi" } } } },
    { node_selector: { "kubernetes.io/arch": "amd64", pool: "agents" } },
    {
      tolerations: [
        { key: "dedicated", operator: "Equal", value: "agents", effect: "NoSchedule" },
        { operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 },
      ],
    },
    { runtime_class: "gvisor", ttl_after_finished_s: 0, drain_timeout_s: 120 },
  ];
  for (const settings of variants) {
    const job = jobManifest(input(settings, {
      memoryMb: 2048,
      cpuCores: 1.5,
      owner: { apiVersion: "apps/v1", kind: "StatefulSet", name: "service", uid: "0b6c-uid" },
    }));
    assert.deepEqual(schemaErrors(job), [], JSON.stringify(settings));
  }
});

Deno.test("jobManifest(): the pod is the boundary — non-root, no capabilities, read-only root, the token in a file", () => {
  const job = jobManifest(
    input({ git_secret: "git-credentials" }, { memoryMb: 2048, cpuCores: 2 }),
  );
  const pod = job.spec!.template.spec!;
  const c = pod.containers[0];
  assert.equal(pod.securityContext?.runAsNonRoot, true);
  assert.equal(pod.securityContext?.seccompProfile?.type, "RuntimeDefault");
  assert.equal(pod.automountServiceAccountToken, false, "a worker needs no Kubernetes API");
  assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
  assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
  assert.deepEqual(c.securityContext?.capabilities?.drop, ["ALL"]);
  assert.deepEqual(c.resources, { limits: { memory: "2048Mi", cpu: "2" } });
  assert.ok(!JSON.stringify(c.env).includes('SERVICE_TOKEN"'), "no token in the environment");
  assert.ok(c.env?.some((e) => e.name === "SERVICE_TOKEN_FILE"));
  assert.deepEqual(c.args?.slice(0, 7), [
    "worker",
    "--once",
    "--server",
    "http://orchestrator.agents.svc:8052",
    "--ticket",
    "svctkt_abc",
    "--name",
  ]);
  assert.equal(job.spec?.backoffLimit, 0);
  assert.equal(job.metadata?.annotations?.["service.task-id"], "T_1.api");
});

Deno.test("schemaErrors(): a misspelt or mistyped field of a Job is found", () => {
  const table: [string, (j: Json) => void, RegExp][] = [
    [
      "misspelt spec field",
      (j) => j.spec.ttlSecondAfterFinished = 1,
      /unknown field "spec\.ttlSecondAfterFinished"/,
    ],
    [
      "misspelt container field",
      (j) => j.spec.template.spec.containers[0].arg = [],
      /unknown field "spec\.template\.spec\.containers\[0\]\.arg"/,
    ],
    [
      "misspelt securityContext field",
      (j) => j.spec.template.spec.securityContext.runAsNonroot = true,
      /runAsNonroot/,
    ],
    ["wrong type", (j) => j.spec.backoffLimit = "0", /backoffLimit must be integer/],
    [
      "bad enum",
      (j) => j.spec.template.spec.containers[0].imagePullPolicy = "Sometimes",
      /must be equal to one of the allowed values/,
    ],
  ];
  for (const [what, change, want] of table) {
    const job = structuredClone(jobManifest(input({}))) as Json;
    change(job);
    assert.match(schemaErrors(job).join("; "), want, what);
  }
});
