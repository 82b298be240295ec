/**
 * The fake Kubernetes API refuses what the real API server refuses (so a launcher that passes
 * here does not fail on a cluster for a name, a label or a field), and its Job controller does
 * what the real one does with deadlines, deletes and TTLs. Driven through the same client the
 * launcher uses.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadClientNode } from "../lib/kubernetes/client_node.js";
import { FakeKubernetes, parseSelector } from "./fakes/kubernetes_api.ts";
import { jobManifest } from "../lib/kubernetes/manifest.ts";
import { KubernetesWorkersSchema } from "../lib/config/kubernetes_schema.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function cluster(program = "sleep 30") {
  const dir = await Deno.makeTempDir({ prefix: "k8s-fake-" });
  const fake = FakeKubernetes.start({
    dir,
    secrets: { "worker-token": { token: "t" } },
    run: () => ({
      cmd: ["sh", "-c", program],
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    }),
  });
  await fake.writeKubeconfig(join(dir, "kubeconfig"));
  const k8s = await loadClientNode();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(join(dir, "kubeconfig"));
  return {
    fake,
    batch: kc.makeApiClient(k8s.BatchV1Api),
    async [Symbol.asyncDispose]() {
      await fake.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function job(over: (j: Json) => void = () => {}): Json {
  const j: Json = jobManifest({
    settings: KubernetesWorkersSchema.parse({ image: "x:1", token_secret: "worker-token" }),
    namespace: "agents",
    runId: "r1",
    taskId: "t1",
    role: "backend",
    sessionId: "s1",
    ticket: "svctkt_x",
    serverUrl: "http://s:1",
    cloneUrl: "https://g/x.git",
    activeDeadlineS: 600,
  });
  over(j);
  return j;
}

/**
 * The refusal of creating `body` sent as is (as kubectl sends it; client-node's serializer would
 * drop an unknown field before it left): status, reason and message, or "created".
 */
async function create(fake: FakeKubernetes, body: Json): Promise<string> {
  const res = await fetch(`${fake.url}/apis/batch/v1/namespaces/agents/jobs`, {
    method: "POST",
    headers: { authorization: "Bearer fake-token", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  if (res.status === 201) return "created";
  assert.equal(answer.kind, "Status");
  assert.equal(answer.status, "Failure");
  assert.equal(answer.code, res.status);
  return `${answer.code} ${answer.reason}: ${answer.message}`;
}

Deno.test("fake API: what the real API server refuses in a Job, it refuses with the same status", async () => {
  await using c = await cluster();
  const table: [string, (j: Json) => void, RegExp][] = [
    ["a valid Job", () => {}, /^created$/],
    [
      "an upper-case name",
      (j) => j.metadata.name = "Svc-T1",
      /^422 Invalid: .*metadata\.name: Invalid value: "Svc-T1": a lowercase RFC 1123 subdomain/,
    ],
    [
      "a name of 64 characters (copied into the pod template's job-name label)",
      (j) => j.metadata.name = "a".repeat(64),
      /^422 Invalid: .*spec\.template\.labels: Invalid value: "a{64}": must be no more than 63 bytes/,
    ],
    [
      "a label value ending in a dot",
      (j) => j.metadata.labels["service.task"] = "t1.",
      /^422 Invalid: .*metadata\.labels: Invalid value: "t1\.": a valid label must be/,
    ],
    [
      "a label value of 64 characters",
      (j) => j.metadata.labels["service.task"] = "t".repeat(64),
      /^422 Invalid: .*must be no more than 63 bytes/,
    ],
    [
      "an ownerReference without a uid",
      (j) =>
        j.metadata.ownerReferences = [{
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          name: "service",
          uid: "",
        }],
      /^422 Invalid: .*metadata\.ownerReferences\[0\]\.uid: Invalid value: "": uid must not be empty/,
    ],
    [
      "an unknown field",
      (j) => j.spec.backofLimit = 0,
      /^422 Invalid: .*unknown field "spec\.backofLimit"/,
    ],
    [
      "a field of the wrong type",
      (j) => j.spec.activeDeadlineSeconds = "600",
      /^422 Invalid: .*activeDeadlineSeconds must be integer/,
    ],
    [
      "a pod without containers",
      (j) => delete j.spec.template.spec.containers,
      /^422 Invalid: .*must have required property containers/,
    ],
    [
      "another namespace in the body",
      (j) => j.metadata.namespace = "other",
      /^400 BadRequest: the namespace of the provided object does not match/,
    ],
  ];
  for (const [what, change, want] of table) {
    const body = job(change);
    if (what === "a valid Job") body.metadata.name = "svc-valid";
    assert.match(await create(c.fake, body), want, what);
  }
  assert.match(
    await create(c.fake, job((j) => j.metadata.name = "svc-valid")),
    /^409 AlreadyExists: jobs\.batch "svc-valid" already exists$/,
  );
  await assert.rejects(
    c.batch.deleteNamespacedJob({ name: "nope", namespace: "agents" }),
    (e: Json) => e.code === 404 && /jobs\.batch \\"nope\\" not found/.test(e.body),
  );
});

Deno.test("fake API: a request without the kubeconfig's token is 401 Unauthorized", async () => {
  await using c = await cluster();
  const res = await fetch(`${c.fake.url}/apis/batch/v1/namespaces/agents/jobs`);
  assert.equal(res.status, 401);
  assert.equal((await res.json()).reason, "Unauthorized");
});

Deno.test("fake API: the Job controller fails a Job past its deadline, deletes a finished one after its TTL, and a delete ends its pod", async () => {
  await using c = await cluster("trap 'exit 143' TERM; while :; do sleep 0.05; done");
  await c.batch.createNamespacedJob({
    namespace: "agents",
    body: job((j) => {
      j.metadata.name = "svc-deadline";
      j.spec.activeDeadlineSeconds = 1;
      j.spec.ttlSecondsAfterFinished = 1;
    }),
  });
  const failed = await c.fake.until(
    () => {
      const j = c.fake.jobs.get("svc-deadline");
      return j?.status.conditions?.find((x: Json) => x.type === "Failed");
    },
    20_000,
    "the deadline",
  );
  assert.equal(failed.reason, "DeadlineExceeded");
  await c.fake.until(() => !c.fake.jobs.has("svc-deadline"), 20_000, "the TTL");
  await c.batch.createNamespacedJob({
    namespace: "agents",
    body: job((j) => j.metadata.name = "svc-deleted"),
  });
  const pod = await c.fake.until(
    () =>
      [...c.fake.pods.values()].find((p) =>
        p.metadata.labels["job-name"] === "svc-deleted" && p.status.phase === "Running"
      ),
    20_000,
    "the pod",
  );
  const listed = await c.batch.listNamespacedJob({
    namespace: "agents",
    labelSelector: "service.run=r1,service.task=t1",
  });
  assert.ok(listed.items.some((j) => j.metadata?.name === "svc-deleted"));
  await c.batch.deleteNamespacedJob({
    name: "svc-deleted",
    namespace: "agents",
    propagationPolicy: "Background",
  });
  await c.fake.until(() => !c.fake.pods.has(pod.metadata.name), 20_000, "the pod to go");
  assert.equal(pod.status.containerStatuses[0].state.terminated.exitCode, 143, "it got SIGTERM");
});

Deno.test("parseSelector() reads equality, inequality, existence and set selectors", () => {
  const labels = { a: "1", b: "2" };
  const table: [string, boolean][] = [
    ["a=1", true],
    ["a==1,b=2", true],
    ["a=2", false],
    ["a!=2", true],
    ["c", false],
    ["!c", true],
    ["a in (1,3)", true],
    ["b notin (2)", false],
    ["", true],
  ];
  for (const [selector, want] of table) {
    assert.equal(parseSelector(selector)(labels), want, selector);
  }
});
