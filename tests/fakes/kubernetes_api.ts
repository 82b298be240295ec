/**
 * A loopback fake of the Kubernetes API for the launcher (DESIGN.md §17): the REST paths and
 * wire format `@kubernetes/client-node` uses for Jobs and pods, with the API server's refusals
 * (401 without the kubeconfig's token, 403 for a verb the Role does not grant, 409
 * AlreadyExists, 404 NotFound, 422 Invalid with a `Status` whose causes name each field: names,
 * label keys and values — a Job name over 63 characters fails as the real server fails it, on
 * the labels it copies to the pod template — an ownerReference without a uid), and every Job
 * body validated against the OpenAPI schemas (tests/fakes/kube_validate.ts): an unknown or
 * mistyped field is a 422 here, so the launcher cannot drift from the real schema.
 *
 * It is also the Job controller and the kubelet: each Job gets one pod (`<job>-xxxxx`, with the
 * `job-name` labels), whose container is started as a real local process — the image's
 * command mapped by the test (`service` → `deno run -A cli.ts`), `$(VAR)` expanded, env from
 * values, the downward API and Secrets (a missing Secret leaves the pod waiting in
 * CreateContainerConfigError, as a kubelet does), emptyDir and Secret volumes as directories of
 * the pod's own whose mount paths are rewritten in its arguments and environment. The pod's exit
 * completes or fails the Job (`backoffLimit` 0 honoured: one pod, never a second);
 * `activeDeadlineSeconds` kills it (DeadlineExceeded); a delete SIGTERMs it and SIGKILLs after
 * its grace; `ttlSecondsAfterFinished` deletes a finished Job. Tests kill pods to make them fail.
 */
import { join } from "node:path";
import { existsSync } from "node:fs";
import { labelCauses, metadataCauses, schemaErrors } from "./kube_validate.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/**
 * How a container becomes a local process: the image's entry point (`command` empty) or the
 * container's command, with its arguments.
 */
export interface ImageRunner {
  (
    container: { command: string[]; args: string[] },
  ): { cmd: string[]; env?: Record<string, string> };
}

/** Options of {@link FakeKubernetes.start}. */
export interface FakeKubernetesOptions {
  namespace?: string;
  /** The bearer token the kubeconfig carries (a request without it is 401). */
  token?: string;
  /** Secrets by name: key → value. */
  secrets?: Record<string, Record<string, string>>;
  /** The images' entry points. */
  run: ImageRunner;
  /** Verbs refused on jobs (a Role that does not grant them). */
  forbid?: ("create" | "list" | "delete")[];
  /** Pods that exist from the start (the orchestrator's own, with its owner). */
  pods?: Json[];
  /** Where pod directories go. */
  dir: string;
  /** Receives the pods' output lines (debugging). */
  log?: (line: string) => void;
  /** Start pods' processes (default true; false: pods stay Pending, for benchmarks of the API). */
  kubelet?: boolean;
}

interface PodRun {
  pod: Json;
  child?: Deno.ChildProcess;
  /** Set when the test asked for an end (its exit code is forced). */
  killedAs?: { exitCode: number; reason: string };
  exited: Promise<void>;
  output: string[];
}

/** What the fake saw (tests read it). */
export interface Observed {
  created: string[];
  deleted: string[];
  /** The most Jobs active at once. */
  maxActive: number;
  /** Refusals answered, as `status reason: message`. */
  refusals: string[];
  /** Every Job body accepted, as sent. */
  bodies: Json[];
}

/** A fake Kubernetes API server on a loopback port. */
export class FakeKubernetes {
  readonly jobs = new Map<string, Json>();
  readonly pods = new Map<string, Json>();
  readonly runs = new Map<string, PodRun>();
  readonly observed: Observed = {
    created: [],
    deleted: [],
    maxActive: 0,
    refusals: [],
    bodies: [],
  };
  readonly namespace: string;
  readonly #o: FakeKubernetesOptions;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #server!: Deno.HttpServer<Deno.NetAddr>;
  #rv = 1;
  #closed = false;
  /** No container starts while set (a slow image pull). */
  #holding = false;
  #changed: () => void = () => {};

  private constructor(o: FakeKubernetesOptions) {
    this.#o = o;
    this.namespace = o.namespace ?? "agents";
    for (const pod of o.pods ?? []) this.pods.set(pod.metadata.name, pod);
  }

  /** Start serving on 127.0.0.1. */
  static start(o: FakeKubernetesOptions): FakeKubernetes {
    const fake = new FakeKubernetes(o);
    fake.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => fake.#handle(req),
    );
    return fake;
  }

  /** The API server's URL. */
  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** A kubeconfig whose current context is this server (written to `path`). */
  async writeKubeconfig(path: string): Promise<void> {
    await Deno.writeTextFile(
      path,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: fake",
        "  cluster:",
        `    server: ${this.url}`,
        // Plain HTTP on loopback: client-node takes http:// only with this set.
        "    insecure-skip-tls-verify: true",
        "users:",
        "- name: launcher",
        "  user:",
        `    token: ${this.#o.token ?? "fake-token"}`,
        "contexts:",
        "- name: fake",
        "  context:",
        "    cluster: fake",
        "    user: launcher",
        `    namespace: ${this.namespace}`,
        "current-context: fake",
        "",
      ].join("\n"),
    );
  }

  /** Jobs not finished and not being deleted. */
  active(): Json[] {
    return [...this.jobs.values()].filter((j) => !finished(j) && !j.metadata.deletionTimestamp);
  }

  /** Resolves when `check` holds (checked on every change), or rejects after `ms`. */
  async until<T>(
    check: () => T | undefined | false,
    ms = 60_000,
    what = "the cluster",
  ): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = check();
      if (got) return got;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 200);
        this.#changed = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  }

  /** Start no pod's container while `on` (an image that pulls slowly); started ones go on. */
  holdAll(on: boolean): void {
    this.#holding = on;
  }

  /** Kill pod `name`'s process as the kernel's OOM killer would (exit 137). */
  killPod(name: string, reason = "OOMKilled"): void {
    const run = this.runs.get(name);
    if (!run?.child) throw new Error(`pod ${name} has no running container`);
    run.killedAs = { exitCode: 137, reason };
    // A container's kill ends every process in it, also those in a session or group of their own
    // (an agent the worker started, the worker's tether: lib/process/tether.ts): the pod's whole
    // process tree, not only its group.
    // The tree is frozen first, as a cgroup kill does: a worker still running between the look at
    // /proc and the kill could start its agent (own session) after the look, and that agent would
    // outlive the pod holding its output pipes. Stopped processes start nothing, so the look is
    // repeated until it finds no new process, then everything found is killed.
    const signal = (pid: number, sig: Deno.Signal) => {
      try {
        Deno.kill(pid, sig);
      } catch { /* gone */ }
    };
    signal(-run.child.pid, "SIGSTOP");
    signal(run.child.pid, "SIGSTOP");
    const tree = new Set<number>();
    for (let grew = true; grew;) {
      grew = false;
      for (const pid of descendantsOf(run.child.pid)) {
        if (tree.has(pid)) continue;
        tree.add(pid);
        grew = true;
        signal(pid, "SIGSTOP");
      }
    }
    signal(-run.child.pid, "SIGKILL");
    signal(run.child.pid, "SIGKILL");
    for (const pid of tree) signal(pid, "SIGKILL");
  }

  /** The output of pod `name`'s container so far. */
  logs(name: string): string {
    return this.runs.get(name)?.output.join("\n") ?? "";
  }

  /** Stop serving; kill every pod process. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    for (const run of this.runs.values()) {
      if (run.child) {
        try {
          Deno.kill(-run.child.pid, "SIGKILL");
        } catch { /* gone */ }
      }
    }
    await Promise.all([...this.runs.values()].map((r) => r.exited));
    await this.#server.shutdown();
  }

  #touch(): void {
    const active = this.active().length;
    if (active > this.observed.maxActive) this.observed.maxActive = active;
    this.#changed();
  }

  #later(ms: number, f: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      if (!this.#closed) f();
    }, ms);
    this.#timers.add(t);
  }

  // ---- HTTP -------------------------------------------------------------------------------

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.headers.get("authorization") !== `Bearer ${this.#o.token ?? "fake-token"}`) {
      return this.#status(401, "Unauthorized", "Unauthorized");
    }
    const ns = this.namespace;
    const jobs = new RegExp(`^/apis/batch/v1/namespaces/([^/]+)/jobs(?:/([^/]+))?$`).exec(
      url.pathname,
    );
    const pods = new RegExp(`^/api/v1/namespaces/([^/]+)/pods(?:/([^/]+))?$`).exec(url.pathname);
    const m = jobs ?? pods;
    if (!m) {
      return this.#status(404, "NotFound", "the server could not find the requested resource");
    }
    if (m[1] !== ns) {
      return this.#status(
        403,
        "Forbidden",
        `${jobs ? "jobs.batch" : "pods"} is forbidden: ` +
          `User "system:serviceaccount:${ns}:service" cannot access namespace "${m[1]}"`,
      );
    }
    const selector = url.searchParams.get("labelSelector") ?? "";
    if (jobs) {
      const verb = req.method === "POST" ? "create" : req.method === "DELETE" ? "delete" : "list";
      if (this.#o.forbid?.includes(verb)) {
        return this.#status(
          403,
          "Forbidden",
          `jobs.batch is forbidden: User "system:serviceaccount:${ns}:service" cannot ${verb} ` +
            `resource "jobs" in API group "batch" in the namespace "${ns}"`,
          { group: "batch", kind: "jobs" },
        );
      }
      if (req.method === "GET" && !m[2]) {
        return this.#list("JobList", "batch/v1", this.jobs, selector);
      }
      if (req.method === "GET") return this.#get(this.jobs, m[2], "jobs", "batch");
      if (req.method === "POST") return this.#createJob(await req.json().catch(() => null));
      if (req.method === "DELETE") {
        return this.#deleteJob(m[2], url.searchParams.get("propagationPolicy"));
      }
    }
    if (pods && req.method === "GET") {
      return m[2]
        ? this.#get(this.pods, m[2], "pods", "")
        : this.#list("PodList", "v1", this.pods, selector);
    }
    return this.#status(
      405,
      "MethodNotAllowed",
      `the server does not allow this method on the requested resource`,
    );
  }

  #status(code: number, reason: string, message: string, details?: Json): Response {
    this.observed.refusals.push(`${code} ${reason}: ${message}`);
    return Response.json({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason,
      ...(details ? { details } : {}),
      code,
    }, { status: code });
  }

  #list(kind: string, apiVersion: string, items: Map<string, Json>, selector: string): Response {
    const match = parseSelector(selector);
    return Response.json({
      kind,
      apiVersion,
      metadata: { resourceVersion: String(this.#rv) },
      items: [...items.values()].filter((o) => match(o.metadata.labels ?? {})),
    });
  }

  #get(items: Map<string, Json>, name: string, kind: string, group: string): Response {
    const found = items.get(name);
    if (found) return Response.json(found);
    return this.#status(
      404,
      "NotFound",
      `${group ? `${kind}.${group}` : kind} "${name}" not found`,
      {
        name,
        ...(group ? { group } : {}),
        kind,
      },
    );
  }

  #createJob(body: Json): Response {
    const name = body?.metadata?.name ?? "";
    if (body?.metadata?.namespace && body.metadata.namespace !== this.namespace) {
      return this.#status(
        400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    const schema = body ? schemaErrors(body) : ["the body is not JSON"];
    if (schema.length > 0) {
      return this.#status(422, "Invalid", `Job.batch "${name}" is invalid: ${schema.join("; ")}`, {
        name,
        group: "batch",
        kind: "Job",
        causes: schema.map((message) => ({ reason: "FieldValueInvalid", message })),
      });
    }
    const uid = crypto.randomUUID();
    // What the API server adds before validating: the Job's own labels on the pod template.
    const podLabels = {
      ...body.spec.template.metadata?.labels,
      "batch.kubernetes.io/controller-uid": uid,
      "batch.kubernetes.io/job-name": name,
      "controller-uid": uid,
      "job-name": name,
    };
    const causes = [
      ...metadataCauses(body.metadata),
      ...labelCauses(podLabels, "spec.template.labels"),
    ];
    if (causes.length > 0) {
      return this.#status(
        422,
        "Invalid",
        `Job.batch "${name}" is invalid: ` +
          causes.map((c) => `${c.field}: ${c.message}`).join(", "),
        { name, group: "batch", kind: "Job", causes },
      );
    }
    if (this.jobs.has(name)) {
      return this.#status(409, "AlreadyExists", `jobs.batch "${name}" already exists`, {
        name,
        group: "batch",
        kind: "jobs",
      });
    }
    this.observed.bodies.push(structuredClone(body));
    const now = new Date().toISOString();
    const job = {
      ...structuredClone(body),
      metadata: {
        ...structuredClone(body.metadata),
        namespace: this.namespace,
        uid,
        resourceVersion: String(++this.#rv),
        creationTimestamp: now,
        generation: 1,
      },
      status: { active: 1, startTime: now, ready: 0 },
    };
    job.spec.template.metadata = { ...job.spec.template.metadata, labels: podLabels };
    job.spec.selector = { matchLabels: { "batch.kubernetes.io/controller-uid": uid } };
    this.jobs.set(name, job);
    this.observed.created.push(name);
    this.#touch();
    if (job.spec.activeDeadlineSeconds) {
      this.#later(job.spec.activeDeadlineSeconds * 1000, () => this.#deadline(name, uid));
    }
    // A pod still starting when the fake closes finds its directories gone: that is no failure.
    this.#startPod(job).catch((e) => {
      if (!this.#closed) throw e;
    });
    return Response.json(job, { status: 201 });
  }

  #deleteJob(name: string, policy: string | null): Response {
    const job = this.jobs.get(name);
    if (!job) {
      return this.#status(404, "NotFound", `jobs.batch "${name}" not found`, {
        name,
        group: "batch",
        kind: "jobs",
      });
    }
    this.jobs.delete(name);
    this.observed.deleted.push(name);
    if (policy !== "Orphan") {
      // The garbage collector deletes its pods: each gets SIGTERM, then SIGKILL after its grace.
      for (
        const pod of [...this.pods.values()].filter((p) => p.metadata.labels?.["job-name"] === name)
      ) {
        this.#deletePod(pod);
      }
    }
    this.#touch();
    return Response.json({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name, group: "batch", kind: "jobs", uid: job.metadata.uid },
    });
  }

  #deletePod(pod: Json): void {
    const run = this.runs.get(pod.metadata.name);
    pod.metadata.deletionTimestamp = new Date().toISOString();
    const remove = () => this.pods.delete(pod.metadata.name);
    if (!run?.child) return void remove();
    try {
      Deno.kill(-run.child.pid, "SIGTERM");
    } catch { /* gone */ }
    const grace = (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    this.#later(grace, () => {
      try {
        Deno.kill(-run.child!.pid, "SIGKILL");
      } catch { /* gone */ }
    });
    void run.exited.then(remove);
  }

  // ---- the Job controller and the kubelet ---------------------------------------------------

  async #startPod(job: Json): Promise<void> {
    const name = `${job.metadata.name}-${randomSuffix()}`;
    const spec = structuredClone(job.spec.template.spec);
    const pod: Json = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace: this.namespace,
        uid: crypto.randomUUID(),
        labels: structuredClone(job.spec.template.metadata.labels),
        annotations: structuredClone(job.spec.template.metadata.annotations ?? {}),
        ownerReferences: [{
          apiVersion: "batch/v1",
          kind: "Job",
          name: job.metadata.name,
          uid: job.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        }],
        creationTimestamp: new Date().toISOString(),
      },
      spec,
      status: { phase: "Pending" },
    };
    this.pods.set(name, pod);
    this.#touch();
    const run: PodRun = { pod, exited: Promise.resolve(), output: [] };
    this.runs.set(name, run);
    if (this.#o.kubelet === false) return;
    while (this.#holding && !this.#closed) {
      pod.status.containerStatuses = [
        waiting("worker", "ErrImagePull", `pulling ${spec.containers[0].image}`),
      ];
      await new Promise((r) => setTimeout(r, 100));
    }
    const container = spec.containers[0];
    const root = join(this.#o.dir, name);
    if (this.#closed) return; // its directories may be gone already
    const mounts = await this.#volumes(spec, container, root);
    const env = this.#env(container, pod, mounts);
    if (typeof env === "string") {
      pod.status.containerStatuses = [waiting("worker", "CreateContainerConfigError", env)];
      this.#touch();
      return;
    }
    const expand = (s: string) =>
      rewritePaths(
        s.replace(/\$\$\(|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, v) =>
          all === "$$(" ? "$(" : env[v] ?? all),
        mounts,
      );
    const image = this.#o.run({
      command: (container.command ?? []).map(expand),
      args: (container.args ?? []).map(expand),
    });
    const cwd = rewritePaths(container.workingDir ?? "/work", mounts);
    if (this.#closed) return; // its directories may be gone already
    let child: Deno.ChildProcess;
    try {
      await Deno.mkdir(cwd, { recursive: true });
      // Closed (its directory removed) or the pod deleted meanwhile: no process to start.
      if (this.#closed || !this.pods.has(name)) return;
      child = new Deno.Command(image.cmd[0], {
        args: image.cmd.slice(1),
        cwd,
        env: { ...image.env, ...env },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        detached: true, // its own process group, as a container's processes are
      }).spawn();
    } catch (e) {
      // close() removes the pods' directories while a pod may be starting: not a failure.
      if (this.#closed && e instanceof Deno.errors.NotFound) return;
      throw e;
    }
    run.child = child;
    // A pod that started while the fake was closing would outlive it: close() killed the others.
    if (this.#closed) {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* gone */ }
    }
    const now = new Date().toISOString();
    pod.status = {
      phase: "Running",
      startTime: now,
      podIP: "127.0.0.1",
      containerStatuses: [{
        name: "worker",
        image: container.image,
        imageID: `sha256:${"0".repeat(64)}`,
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: now } },
      }],
    };
    const j = this.jobs.get(job.metadata.name);
    if (j) j.status.ready = 1;
    this.#touch();
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      let rest = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const lines = (rest + decoder.decode(value, { stream: true })).split("\n");
        rest = lines.pop()!;
        for (const line of lines) {
          run.output.push(line);
          this.#o.log?.(`${name}: ${line}`);
        }
      }
      if (rest) run.output.push(rest);
    };
    // A container ends when its main process does (a pod's PID 1; the kernel ends the rest): a
    // process that escaped the kill and still holds the pipes must not keep the pod running, so
    // the output gets a short grace to drain, not a say in when the pod ended.
    const drained = Promise.all([pump(child.stdout), pump(child.stderr)]);
    run.exited = child.status.then(async (status) => {
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([drained, new Promise((r) => grace = setTimeout(r, 2_000))]);
      clearTimeout(grace);
      this.#podExited(job.metadata.name, job.metadata.uid, run, status.code);
    });
  }

  /** Directories for the pod's volumes; mount path → directory. */
  async #volumes(spec: Json, container: Json, root: string): Promise<Map<string, string>> {
    const mounts = new Map<string, string>();
    for (const m of container.volumeMounts ?? []) {
      const volume = spec.volumes?.find((v: Json) => v.name === m.name);
      const dir = join(root, "volumes", m.name);
      await Deno.mkdir(dir, { recursive: true });
      if (volume?.secret) {
        const data = this.#o.secrets?.[volume.secret.secretName] ?? {};
        const items: { key: string; path: string }[] = volume.secret.items ??
          Object.keys(data).map((key) => ({ key, path: key }));
        for (const item of items) {
          if (data[item.key] === undefined) continue;
          await Deno.writeTextFile(join(dir, item.path), data[item.key], {
            mode: volume.secret.defaultMode ?? 0o644,
          });
        }
      }
      mounts.set(m.mountPath, dir);
    }
    return mounts;
  }

  /** The container's environment, or why the kubelet cannot make it. */
  #env(container: Json, pod: Json, mounts: Map<string, string>): Record<string, string> | string {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      const data = this.#o.secrets?.[from.secretRef?.name];
      if (!data) return `secret "${from.secretRef?.name}" not found`;
      Object.assign(env, data);
    }
    for (const e of container.env ?? []) {
      if (e.value !== undefined) env[e.name] = rewritePaths(e.value, mounts);
      else if (e.valueFrom?.fieldRef) {
        const path = e.valueFrom.fieldRef.fieldPath;
        env[e.name] = path === "metadata.name"
          ? pod.metadata.name
          : path === "metadata.namespace"
          ? pod.metadata.namespace
          : "";
      } else if (e.valueFrom?.secretKeyRef) {
        const ref = e.valueFrom.secretKeyRef;
        const value = this.#o.secrets?.[ref.name]?.[ref.key];
        if (value === undefined) {
          return this.#o.secrets?.[ref.name]
            ? `couldn't find key ${ref.key} in Secret ${this.namespace}/${ref.name}`
            : `secret "${ref.name}" not found`;
        }
        env[e.name] = value;
      }
    }
    for (const v of [...(pod.spec.volumes ?? [])]) {
      if (v.secret && !this.#o.secrets?.[v.secret.secretName]) {
        return `secret "${v.secret.secretName}" not found`;
      }
    }
    return env;
  }

  #podExited(jobName: string, uid: string, run: PodRun, code: number): void {
    const exitCode = run.killedAs?.exitCode ?? code;
    const reason = run.killedAs?.reason ?? (exitCode === 0 ? "Completed" : "Error");
    const now = new Date().toISOString();
    run.pod.status.phase = exitCode === 0 ? "Succeeded" : "Failed";
    run.pod.status.containerStatuses = [{
      ...run.pod.status.containerStatuses?.[0],
      ready: false,
      started: false,
      state: {
        terminated: { exitCode, reason, startedAt: run.pod.status.startTime, finishedAt: now },
      },
    }];
    const job = this.jobs.get(jobName);
    if (job && job.metadata.uid === uid && !finished(job)) {
      if (exitCode === 0) this.#finish(job, "Complete", undefined, undefined);
      else {this.#finish(
          job,
          "Failed",
          "BackoffLimitExceeded",
          "Job has reached the specified backoff limit",
        );}
    }
    this.#touch();
  }

  #deadline(name: string, uid: string): void {
    const job = this.jobs.get(name);
    if (!job || job.metadata.uid !== uid || finished(job)) return;
    this.#finish(
      job,
      "Failed",
      "DeadlineExceeded",
      "Job was active longer than specified deadline",
    );
    for (
      const pod of [...this.pods.values()].filter((p) => p.metadata.labels?.["job-name"] === name)
    ) {
      const run = this.runs.get(pod.metadata.name);
      if (run?.child) {
        run.killedAs = { exitCode: 143, reason: "DeadlineExceeded" };
        try {
          Deno.kill(-run.child.pid, "SIGTERM");
        } catch { /* gone */ }
      }
    }
    this.#touch();
  }

  #finish(job: Json, type: "Complete" | "Failed", reason?: string, message?: string): void {
    const now = new Date().toISOString();
    const interim = type === "Complete" ? "SuccessCriteriaMet" : "FailureTarget";
    job.status = {
      ...job.status,
      active: 0,
      ready: 0,
      ...(type === "Complete" ? { succeeded: 1, completionTime: now } : { failed: 1 }),
      conditions: [
        {
          type: interim,
          status: "True",
          lastProbeTime: now,
          lastTransitionTime: now,
          ...(reason ? { reason, message } : {}),
        },
        {
          type,
          status: "True",
          lastProbeTime: now,
          lastTransitionTime: now,
          ...(reason ? { reason, message } : {}),
        },
      ],
    };
    job.metadata.resourceVersion = String(++this.#rv);
    const ttl = job.spec.ttlSecondsAfterFinished;
    if (ttl !== undefined) {
      const uid = job.metadata.uid;
      this.#later(ttl * 1000, () => {
        const still = this.jobs.get(job.metadata.name);
        if (still?.metadata.uid === uid) this.#deleteJob(job.metadata.name, "Background");
      });
    }
  }
}

function finished(job: Json): boolean {
  return (job.status?.conditions ?? []).some((c: Json) =>
    (c.type === "Complete" || c.type === "Failed") && c.status === "True"
  );
}

function waiting(name: string, reason: string, message: string): Json {
  return { name, ready: false, restartCount: 0, state: { waiting: { reason, message } } };
}

function randomSuffix(): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  return Array.from(crypto.getRandomValues(new Uint8Array(5)), (b) => alphabet[b % alphabet.length])
    .join("");
}

/** Rewrite a container path under a mount to the pod's directory for it. */
function rewritePaths(value: string, mounts: Map<string, string>): string {
  if (mounts.size === 0) return value;
  // One pass, longest mount first (/var/run/service/git before /var), never a rewritten path
  // again; a path below a mount that exists on this machine is the host's own (a test's
  // repository under /tmp), not the container's, and stays.
  const paths = [...mounts.keys()].sort((a, b) => b.length - a.length).map(escape);
  const pattern = new RegExp(`(^|[\\s=:])(${paths.join("|")})((?:/[^\\s:]*)?)(?=$|[\\s:])`, "g");
  return value.replace(
    pattern,
    (all, before: string, path: string, rest: string) =>
      rest && existsSync(path + rest) ? all : before + mounts.get(path) + rest,
  );
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A label selector (`a=b,c!=d,e,!f,g in (x,y)`) as a predicate. */
export function parseSelector(selector: string): (labels: Record<string, string>) => boolean {
  const terms = selector.split(/,(?![^(]*\))/).map((t) => t.trim()).filter(Boolean);
  const tests = terms.map((term): (l: Record<string, string>) => boolean => {
    let m = /^([^!=\s]+)\s*!=\s*(.*)$/.exec(term);
    if (m) return (l) => l[m![1]] !== m![2];
    m = /^([^!=\s]+)\s*==?\s*(.*)$/.exec(term);
    if (m) return (l) => l[m![1]] === m![2];
    m = /^(\S+)\s+(in|notin)\s+\((.*)\)$/.exec(term);
    if (m) {
      const values = m[3].split(",").map((v) => v.trim());
      return m[2] === "in" ? (l) => values.includes(l[m![1]]) : (l) => !values.includes(l[m![1]]);
    }
    if (term.startsWith("!")) return (l) => !(term.slice(1) in l);
    return (l) => term in l;
  });
  return (labels) => tests.every((t) => t(labels));
}

/** Every live descendant of `root` (Linux `/proc`; none elsewhere). */
function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(entry.name)]);
      } catch { /* exited meanwhile */ }
    }
  } catch {
    return [];
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
