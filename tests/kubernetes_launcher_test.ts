/**
 * The Kubernetes launcher (lib/kubernetes) through `@kubernetes/client-node` against the loopback
 * fake API (tests/fakes/kubernetes_api.ts), whose pods are real processes: here a small shell
 * program stands in for the worker image, so what is tested is the launcher — how many Jobs,
 * which are deleted, lapse, are lost or adopted — with a stand-in for the run's decision core.
 * tests/kubernetes_e2e_test.ts runs the real `service worker --once` in the pods.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeKubernetes } from "./fakes/kubernetes_api.ts";
import { schemaErrors } from "./fakes/kube_validate.ts";
import { Launcher, type LaunchTask, prepareKubernetes } from "../lib/kubernetes/mod.ts";
import { connectCluster, KubernetesSetupError } from "../lib/kubernetes/api.ts";
import { KubernetesWorkersSchema } from "../lib/config/kubernetes_schema.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { TicketBook } from "../lib/workers/tickets.ts";

/** The stand-in image: it says it started, then waits for `exit-<pod>` and exits with its code. */
const POD_PROGRAM = `
echo "started $POD_NAME with $*"
echo "$*" > "$CTRL/args-$POD_NAME"
cat "$SERVICE_TOKEN_FILE" > "$CTRL/token-$POD_NAME"
while [ ! -f "$CTRL/exit-$POD_NAME" ]; do sleep 0.05; done
exit "$(cat "$CTRL/exit-$POD_NAME")"
`;

interface Harness {
  fake: FakeKubernetes;
  dir: string;
  ctrl: string;
  env: Record<string, string>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function harness(forbid: ("create" | "list" | "delete")[] = []): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "k8s-launcher-" });
  const ctrl = join(dir, "ctrl");
  await Deno.mkdir(ctrl);
  const fake = FakeKubernetes.start({
    dir: join(dir, "pods"),
    secrets: { "worker-token": { token: "the-worker-token" } },
    forbid,
    run: ({ args }) => ({
      cmd: ["sh", "-c", POD_PROGRAM, "service", ...args],
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", CTRL: ctrl },
    }),
  });
  const kubeconfig = join(dir, "kubeconfig");
  await fake.writeKubeconfig(kubeconfig);
  return {
    fake,
    dir,
    ctrl,
    env: { KUBECONFIG: kubeconfig, HOME: dir },
    async [Symbol.asyncDispose]() {
      await fake.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The run's tasks and the core's reservations, as the launcher sees them through its callbacks. */
class Core {
  readonly tasks = new Map<string, LaunchTask>();
  readonly reserved = new Set<string>();
  readonly lapsed: { taskId: string; reason: string }[] = [];
  readonly adopted: string[] = [];
  readonly lost: { sessionId: string; reason: string }[] = [];
  #n = 0;

  constructor(ids: string[]) {
    for (const id of ids) this.tasks.set(id, { status: "OPEN", role: "backend" });
  }

  launcher(h: Harness, settings: Record<string, unknown>, tickets = new TicketBook()): Launcher {
    return new Launcher({
      settings: KubernetesWorkersSchema.parse({
        image: "registry.example/service:1",
        token_secret: "worker-token",
        poll_interval_s: 0.2,
        ...settings,
      }),
      api: this.api!,
      tickets,
      runId: "r-1",
      serverUrl: "http://orchestrator.agents.svc:8052",
      cloneUrl: "https://git.example/shop.git",
      memoryMb: 1024,
      tasks: () => this.tasks,
      timeoutS: () => 600,
      sessionId: () => `s-r1-${String(++this.#n).padStart(3, "0")}-${h.dir.slice(-4)}`,
      reserve: (free) => {
        const ready = [...this.tasks].filter(([id, t]) =>
          t.status === "OPEN" && !this.reserved.has(id)
        );
        const got = ready.slice(0, free).map(([taskId]) => ({ taskId }));
        for (const g of got) this.reserved.add(g.taskId);
        return Promise.resolve(got);
      },
      lapse: (taskId, reason) => {
        this.reserved.delete(taskId);
        this.lapsed.push({ taskId, reason });
      },
      adopt: (taskId) => {
        this.reserved.add(taskId);
        this.adopted.push(taskId);
      },
      lost: (sessionId, reason) => this.lost.push({ sessionId, reason }),
      log: () => {},
    });
  }

  api?: Awaited<ReturnType<typeof connectCluster>>;
}

function podOf(fake: FakeKubernetes, job: string): string | undefined {
  return [...fake.pods.values()].find((p) =>
    p.metadata.labels["job-name"] === job && p.status.phase === "Running"
  )
    ?.metadata.name;
}

Deno.test("launcher: max_in_flight Jobs at once, each valid, labelled and bound to its task by a ticket", async () => {
  await using h = await harness();
  const core = new Core(["t1", "t2", "t3"]);
  core.api = await connectCluster({ env: h.env });
  assert.equal(core.api.namespace, "agents", "the kubeconfig context's namespace");
  const tickets = new TicketBook();
  const launcher = core.launcher(h, { max_in_flight: 2 }, tickets);
  await launcher.pass();
  await launcher.pass(); // counted from the list: still two
  assert.equal(h.fake.jobs.size, 2);
  assert.equal(h.fake.observed.maxActive, 2);
  for (const body of h.fake.observed.bodies) {
    assert.deepEqual(schemaErrors(body), [], "every Job body validates offline too");
    assert.equal(body.spec.backoffLimit, 0);
    assert.equal(body.spec.activeDeadlineSeconds, 600 + 900);
    assert.equal(body.spec.ttlSecondsAfterFinished, 3600);
    assert.equal(body.metadata.labels["service.run"], "r-1");
    assert.match(body.metadata.labels["service.session"], /^s-r1-00\d/);
    assert.deepEqual(body.spec.template.spec.containers[0].resources, {
      limits: { memory: "1024Mi" },
    });
  }
  const [first] = h.fake.observed.bodies;
  const args: string[] = first.spec.template.spec.containers[0].args;
  const ticket = args[args.indexOf("--ticket") + 1];
  const redeemed = await tickets.redeem(ticket, "r-1");
  assert.ok(redeemed.ok && redeemed.grant.task_id === first.metadata.labels["service.task"]);
  assert.equal(redeemed.ok && redeemed.grant.isolation, "pod:registry.example/service:1");
  // The pod runs with the Secret's token in a file, its name from the downward API.
  const pod = await h.fake.until(() => podOf(h.fake, first.metadata.name), 30_000, "the pod");
  const token = await h.fake.until(
    () => {
      try {
        return Deno.readTextFileSync(join(h.ctrl, `token-${pod}`)) || undefined;
      } catch {
        return undefined;
      }
    },
    30_000,
    `the pod's token (${h.fake.logs(pod)})`,
  );
  assert.equal(token, "the-worker-token");
  assert.match(Deno.readTextFileSync(join(h.ctrl, `args-${pod}`)), new RegExp(`--name ${pod}\\b`));
});

Deno.test("launcher: a cancelled task's Job is deleted; a pod that fails before claiming gives its task back with the reason", async () => {
  await using h = await harness();
  const core = new Core(["t1", "t2"]);
  core.api = await connectCluster({ env: h.env });
  const launcher = core.launcher(h, { max_in_flight: 2 });
  await launcher.pass();
  const jobOf = (task: string) =>
    [...h.fake.jobs.values()].find((j) => j.metadata.labels["service.task"] === task)!.metadata
      .name;
  const j1 = jobOf("t1");
  const j2 = jobOf("t2");
  core.tasks.set("t1", { status: "CANCELLED", role: "backend" });
  await launcher.pass();
  assert.ok(h.fake.observed.deleted.includes(j1));
  assert.ok(!h.fake.jobs.has(j1));
  const pod = await h.fake.until(() => podOf(h.fake, j2), 30_000, "t2's pod");
  h.fake.killPod(pod);
  await h.fake.until(() => h.fake.jobs.get(j2)?.status.failed === 1, 30_000, "t2's Job to fail");
  await launcher.pass();
  assert.equal(core.lapsed.length, 1);
  assert.equal(core.lapsed[0].taskId, "t2");
  assert.match(
    core.lapsed[0].reason,
    new RegExp(`Job ${j2} failed \\(BackoffLimitExceeded.*OOMKilled \\(exit 137\\)`),
  );
  // It waits before the next Job (a broken image must not spin), then makes a new one.
  const before = h.fake.observed.created.length;
  await launcher.pass();
  assert.equal(h.fake.observed.created.length, before, "no new Job during the back-off");
});

Deno.test("launcher: a restarted orchestrator adopts the live Jobs it finds, and a pod that dies holding its task loses its session", async () => {
  await using h = await harness();
  const core = new Core(["t1", "t2"]);
  core.api = await connectCluster({ env: h.env });
  await core.launcher(h, { max_in_flight: 5 }).pass();
  assert.equal(h.fake.jobs.size, 2);
  // A new process: it knows of no reservation; t1's pod claimed meanwhile, t2's has not.
  const [j1, j2] = [...h.fake.jobs.values()];
  const t1 = j1.metadata.annotations["service.task-id"];
  core.tasks.set(t1, {
    status: "IN_PROGRESS",
    role: "backend",
    session_id: j1.metadata.annotations["service.session-id"],
  });
  const fresh = new Core([]);
  fresh.tasks.set(t1, core.tasks.get(t1)!);
  fresh.tasks.set(j2.metadata.annotations["service.task-id"], { status: "OPEN", role: "backend" });
  fresh.api = core.api;
  const restarted = fresh.launcher(h, { max_in_flight: 5 });
  await restarted.pass();
  assert.deepEqual(fresh.adopted, [j2.metadata.annotations["service.task-id"]]);
  assert.equal(h.fake.jobs.size, 2, "no duplicate Job");
  const pod = await h.fake.until(() => podOf(h.fake, j1.metadata.name), 30_000, "t1's pod");
  h.fake.killPod(pod, "Error");
  await h.fake.until(
    () => h.fake.jobs.get(j1.metadata.name)?.status.failed === 1,
    30_000,
    "the Job to fail",
  );
  await restarted.pass();
  assert.equal(fresh.lost.length, 1);
  assert.equal(fresh.lost[0].sessionId, j1.metadata.annotations["service.session-id"]);
  assert.match(fresh.lost[0].reason, /while its session held the task/);
  // Said again while the session still holds the task (a loss said while the task was still
  // being handed out finds no session and is dropped), and no more once it does not.
  await restarted.pass();
  assert.equal(fresh.lost.length, 2);
  fresh.tasks.set(t1, { status: "ORPHANED", role: "backend", session_id: fresh.lost[0].sessionId });
  await restarted.pass();
  assert.equal(fresh.lost.length, 2);
});

Deno.test("launcher: a Job the API server refuses to create gives its task back with the server's words and the fix", async () => {
  await using h = await harness(["create"]);
  const core = new Core(["t1"]);
  core.api = await connectCluster({ env: h.env });
  await core.launcher(h, {}).pass();
  assert.equal(core.lapsed.length, 1);
  assert.match(
    core.lapsed[0].reason,
    /403 Forbidden: jobs\.batch is forbidden.*cannot create resource "jobs"/,
  );
  assert.match(core.lapsed[0].reason, /needs the Role in deploy\//);
});

Deno.test("prepareKubernetes(): a cluster where the Jobs cannot be listed fails before the run, naming the Role", async () => {
  await using h = await harness(["list"]);
  const config = ServiceConfigSchema.parse({
    cli: "claude",
    roles: { backend: {} },
    server: { public_url: "http://orchestrator.agents.svc:8052" },
    workers: {
      kubernetes: {
        image: "x:1",
        token_secret: "worker-token",
        clone_url: "https://git.example/x.git",
      },
    },
  });
  await assert.rejects(
    prepareKubernetes(config, { root: h.dir, env: h.env, out: () => {} }),
    (e: Error) =>
      e instanceof KubernetesSetupError && /cannot list resource "jobs"/.test(e.message) &&
      /Role of deploy\//.test((e as KubernetesSetupError).fix ?? ""),
  );
  await assert.rejects(
    connectCluster({ env: { HOME: h.dir } }),
    (e: Error) => e instanceof KubernetesSetupError && /no KUBECONFIG/.test(e.message),
  );
});
