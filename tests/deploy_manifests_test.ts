/**
 * deploy/: the kustomize base, its components (KEDA, oauth2-proxy) and the example overlay render
 * offline with `kubectl kustomize`, and every rendered object validates against the Kubernetes
 * OpenAPI schemas (tests/fakes/kube_validate.ts: kubernetes-models plus unknown fields; KEDA's
 * ScaledJob with its own models). What the guide promises is checked on the rendered objects: one
 * orchestrator on a ReadWriteOncePod volume with its probes, a namespaced Role granting the
 * launcher exactly its verbs, network policies, no Secret or ConfigMap referenced that the render
 * does not hold. A misspelt field in an overlay fails. The Containerfile is linted (no image can be
 * built here without a registry).
 *
 * Without a kubectl whose kustomize knows components (v3.7+), the render tests are skipped and
 * say why: kubectl is not in Debian's packages at a usable version.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { schemaErrors } from "./fakes/kube_validate.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const DEPLOY = new URL("../deploy/", import.meta.url).pathname;

async function kubectl(): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("kubectl", {
      args: ["version", "--client", "-o", "json"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const v = JSON.parse(new TextDecoder().decode(out.stdout));
    const [major, minor] = String(v.kustomizeVersion ?? "").replace(/^v/, "").split(".").map(
      Number,
    );
    return major > 3 || (major === 3 && minor >= 7)
      ? undefined
      : `kubectl's kustomize ${v.kustomizeVersion ?? "?"} has no components (needs v3.7+)`;
  } catch {
    return "kubectl is not installed";
  }
}

const missing = await kubectl();
if (missing) console.warn(`!!! deploy render tests skipped: ${missing}`);

/** A copy of deploy/kustomize with the overlay's secret files written (as a user would). */
async function workspace(): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "deploy-render-" });
  await new Deno.Command("cp", { args: ["-r", join(DEPLOY, "kustomize"), dir] }).output();
  const secrets = join(dir, "kustomize", "overlays", "example", "secrets");
  await Deno.writeTextFile(
    join(secrets, "tokens.env"),
    "OPERATOR_TOKEN=o-123\nWORKER_TOKEN=w-123\nREADER_TOKEN=r-123\n",
  );
  await Deno.writeTextFile(join(secrets, "provider-keys.env"), "ANTHROPIC_API_KEY=sk-test\n");
  await Deno.writeTextFile(join(secrets, "git-credentials"), "https://bot:t@github.com\n");
  for (const f of ["cookie-secret", "client-secret", "proxy-secret"]) {
    await Deno.writeTextFile(join(secrets, f), `${f}-value`);
  }
  return {
    dir: join(dir, "kustomize"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function render(path: string): Promise<Json[]> {
  const out = await new Deno.Command("kubectl", {
    args: ["kustomize", path],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return parseAllDocuments(new TextDecoder().decode(out.stdout)).map((d) => d.toJSON())
    .filter(Boolean);
}

function find(objects: Json[], kind: string, name: string): Json {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  assert.ok(found, `${kind}/${name} is rendered`);
  return found;
}

/** Every Secret and ConfigMap a pod spec names that is not optional. */
function references(pod: Json): { kind: string; name: string }[] {
  const refs: { kind: string; name: string }[] = [];
  for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
    for (const e of c.env ?? []) {
      const s = e.valueFrom?.secretKeyRef;
      if (s && !s.optional) refs.push({ kind: "Secret", name: s.name });
      const m = e.valueFrom?.configMapKeyRef;
      if (m && !m.optional) refs.push({ kind: "ConfigMap", name: m.name });
    }
    for (const f of c.envFrom ?? []) {
      if (f.secretRef && !f.secretRef.optional) {
        refs.push({ kind: "Secret", name: f.secretRef.name });
      }
    }
  }
  for (const v of pod.volumes ?? []) {
    if (v.secret) refs.push({ kind: "Secret", name: v.secret.secretName });
    if (v.configMap) refs.push({ kind: "ConfigMap", name: v.configMap.name });
  }
  return refs;
}

Deno.test({
  name:
    "deploy: the example overlay renders offline and every object validates against the schemas",
  ignore: missing !== undefined,
  async fn() {
    await using w = await workspace();
    const objects = await render(join(w.dir, "overlays", "example"));
    for (const o of objects) {
      assert.deepEqual(schemaErrors(o), [], `${o.kind}/${o.metadata?.name}`);
      assert.equal(o.metadata.namespace ?? "agents", "agents", `${o.kind} is namespaced`);
    }
    const kinds = new Set(objects.map((o) => o.kind));
    for (const k of ["StatefulSet", "Service", "Role", "RoleBinding", "NetworkPolicy", "Secret"]) {
      assert.ok(kinds.has(k), `a ${k} is rendered`);
    }
    assert.ok(
      !kinds.has("ClusterRole") && !kinds.has("ClusterRoleBinding"),
      "nothing cluster-wide",
    );

    const sts = find(objects, "StatefulSet", "service");
    assert.equal(sts.spec.replicas, 1);
    assert.deepEqual(sts.spec.volumeClaimTemplates[0].spec.accessModes, ["ReadWriteOncePod"]);
    const orchestrator = sts.spec.template.spec.containers.find((c: Json) =>
      c.name === "orchestrator"
    );
    assert.equal(orchestrator.livenessProbe.httpGet.path, "/healthz");
    assert.equal(orchestrator.readinessProbe.httpGet.path, "/readyz");
    assert.equal(orchestrator.image, "registry.example/service:1", "the overlay's image");
    assert.equal(orchestrator.securityContext.allowPrivilegeEscalation, false);
    assert.ok(
      orchestrator.env.some((e: Json) => e.name === "SERVICE_POD_NAME"),
      "the launcher finds its own pod (the Jobs' owner)",
    );
    const proxy = sts.spec.template.spec.containers.find((c: Json) => c.name === "oauth2-proxy");
    assert.ok(proxy, "the oauth2-proxy component adds its sidecar");
    const alpha = find(objects, "ConfigMap", "service-oauth2-proxy").data["alpha-config.yaml"];
    assert.match(
      alpha,
      /uri: http:\/\/127\.0\.0\.1:8054/,
      "the proxy forwards to the trusted port",
    );
    assert.match(alpha, /X-Service-Proxy-Secret/);

    const role = find(objects, "Role", "service-launcher");
    const verbs = (group: string, resource: string) =>
      role.rules.find((r: Json) => r.apiGroups.includes(group) && r.resources.includes(resource))
        ?.verbs.sort();
    assert.deepEqual(verbs("batch", "jobs"), ["create", "delete", "get", "list", "watch"]);
    assert.deepEqual(verbs("", "pods"), ["get", "list"]);
    assert.equal(role.rules.length, 2, "no other rights (no Secrets, no exec)");
    const binding = find(objects, "RoleBinding", "service-launcher");
    assert.equal(binding.subjects[0].name, sts.spec.template.spec.serviceAccountName);

    const workers = find(objects, "NetworkPolicy", "service-worker");
    assert.deepEqual(workers.spec.ingress, [], "nothing reaches a worker");
    assert.ok(
      JSON.stringify(workers.spec.egress).includes("169.254.0.0/16"),
      "the metadata address is out of reach",
    );

    const held = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    for (const ref of references(sts.spec.template.spec)) {
      assert.ok(held.has(`${ref.kind}/${ref.name}`), `${ref.kind} ${ref.name} is rendered`);
    }
    const tokens = find(objects, "Secret", "service-tokens");
    assert.deepEqual(Object.keys(tokens.data).sort(), [
      "OPERATOR_TOKEN",
      "READER_TOKEN",
      "WORKER_TOKEN",
    ]);
  },
});

Deno.test({
  name: "deploy: the KEDA component renders a ScaledJob per role that reads /metrics and validates",
  ignore: missing !== undefined,
  async fn() {
    await using w = await workspace();
    const overlay = join(w.dir, "overlays", "example", "kustomization.yaml");
    const text = await Deno.readTextFile(overlay);
    await Deno.writeTextFile(
      overlay,
      text.replace("# - ../../components/keda ", "- ../../components/keda "),
    );
    const objects = await render(join(w.dir, "overlays", "example"));
    const scaled = find(objects, "ScaledJob", "service-worker-backend");
    assert.deepEqual(schemaErrors(scaled), []);
    const trigger = scaled.spec.triggers[0];
    assert.equal(trigger.type, "metrics-api");
    assert.equal(trigger.metadata.format, "prometheus");
    assert.equal(trigger.metadata.valueLocation, 'service_tasks_ready{role="backend"}');
    assert.match(trigger.metadata.url, /^http:\/\/service:8052\/metrics$/);
    const auth = find(objects, "TriggerAuthentication", trigger.authenticationRef.name);
    assert.equal(
      auth.spec.secretTargetRef[0].key,
      "READER_TOKEN",
      "KEDA reads with a reader token",
    );
    const pod = scaled.spec.jobTargetRef.template.spec;
    assert.equal(scaled.spec.jobTargetRef.backoffLimit, 0);
    assert.equal(pod.containers[0].image, "registry.example/service:1");
    assert.deepEqual(pod.containers[0].args.slice(0, 2), ["worker", "--once"]);
    const held = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    for (const ref of references(pod)) {
      assert.ok(held.has(`${ref.kind}/${ref.name}`), `${ref.kind} ${ref.name} is rendered`);
    }
  },
});

Deno.test({
  name: "deploy: an overlay with a misspelt field renders but does not validate",
  ignore: missing !== undefined,
  async fn() {
    await using w = await workspace();
    const overlay = join(w.dir, "overlays", "example");
    await Deno.writeTextFile(
      join(overlay, "typo.yaml"),
      [
        "apiVersion: apps/v1",
        "kind: StatefulSet",
        "metadata:",
        "  name: service",
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
        "        - name: orchestrator",
        "          readinesProbe:",
        "            httpGet: {path: /readyz, port: http}",
        "",
      ].join("\n"),
    );
    const text = await Deno.readTextFile(join(overlay, "kustomization.yaml"));
    await Deno.writeTextFile(
      join(overlay, "kustomization.yaml"),
      text + "patches:\n  - path: typo.yaml\n",
    );
    const sts = find(await render(overlay), "StatefulSet", "service");
    const errors = schemaErrors(sts);
    assert.equal(errors.length, 1, errors.join("; "));
    assert.match(errors[0], /unknown field "spec\.template\.spec\.containers\[0\]\.readinesProbe"/);
  },
});

Deno.test("deploy/Containerfile: Debian bookworm-slim, git, Deno from npm, the agent CLIs, a non-root user", async () => {
  const text = await Deno.readTextFile(join(DEPLOY, "Containerfile"));
  const lines = text.split("\n").filter((l) => !l.startsWith("#"));
  const froms = lines.filter((l) => /^FROM /.test(l));
  assert.ok(
    froms.length >= 2 && froms.every((l) => /^FROM \$\{DEBIAN\}/.test(l)),
    "FROM the pinned base",
  );
  assert.match(text, /^ARG DEBIAN=docker\.io\/library\/debian:bookworm-slim$/m);
  assert.match(
    text,
    /npm install --global deno@2\.9\.6/,
    "deno at the project's version, from npm",
  );
  assert.match(text, /deno install --frozen/, "the lock file is honoured");
  assert.match(text, /apt-get install[^\n]*\bgit\b/);
  assert.match(text, /@anthropic-ai\/claude-code/);
  const user = lines.filter((l) => /^USER /.test(l)).pop();
  assert.equal(user, "USER 10001:10001", "the last USER is numeric and not root");
  assert.match(text, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "\/usr\/local\/bin\/service"\]$/m);
  assert.ok(!/:latest\b/.test(text), "no floating tags");
  assert.ok(!/\bcurl\b.*\|\s*(sh|bash)/.test(text), "nothing piped from the network into a shell");
  // The Jobs the launcher creates run as this user with the image's entrypoint.
  const { WORKER_UID } = await import("../lib/kubernetes/manifest.ts");
  assert.equal(WORKER_UID, 10001);
});
