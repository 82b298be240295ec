/** Test helpers: a workspace with the five trackers' webhooks on, and signed deliveries to it. */
import { type TestWorkspace, testWorkspace, type TestWorkspaceOptions } from "./_workspace.ts";
import { type SignatureScheme, signBody } from "../lib/webhooks/signature.ts";

export const FIXTURES = new URL("./fixtures/trackers/", import.meta.url);
/** A tracker payload fixture's text. */
export const fixture = (name: string) => Deno.readTextFile(new URL(name, FIXTURES));

/** Headers each built-in tracker sends (spec §4.2 rule 3). */
export const TRACKERS: Record<string, { scheme: SignatureScheme; sig: string; id: string }> = {
  tracker_a: {
    scheme: "hub-sha256",
    sig: "X-Hub-Signature-256",
    id: "X-Tracker-A-Webhook-Identifier",
  },
  tracker_b: { scheme: "hub-sha256", sig: "X-Hub-Signature-256", id: "X-Tracker-B-Delivery" },
  tracker_c: { scheme: "token", sig: "X-Tracker-C-Token", id: "X-Tracker-C-Event-UUID" },
  tracker_d: { scheme: "raw-hex", sig: "Tracker-D-Signature", id: "Tracker-D-Delivery" },
  tracker_e: { scheme: "raw-hex", sig: "X-Tracker-E-Signature", id: "X-Tracker-E-Delivery" },
};

let n = 0;

/**
 * A workspace whose five trackers have webhooks on, each secret in its own fresh variable.
 * `projects` sets `trackers.<name>.project` (webhook-only: `polling: false`).
 */
export async function webhookWorkspace(
  extra = "",
  options: Pick<TestWorkspaceOptions, "tokens" | "parent"> & { projects?: Record<string, string> } =
    {},
): Promise<TestWorkspace & { secret: (t: string) => string; env: Record<string, string> }> {
  const tag = `${Deno.pid}_${n++}`;
  const env: Record<string, string> = {};
  let trackers = "trackers:\n";
  for (const name of Object.keys(TRACKERS)) {
    const variable = `WH_${name.toUpperCase()}_${tag}`;
    env[name] = variable;
    Deno.env.set(variable, `secret-of-${name}-${tag}`);
    trackers += `  ${name}:\n    webhook: { enabled: true, secret_env: ${variable} }\n`;
    const project = options.projects?.[name] ??
      (name === "tracker_e" ? "acme/4af68566-94a4-4eb3-94aa-50dc9427067b" : undefined);
    if (project) trackers += `    project: ${project}\n    polling: false\n`;
  }
  const ws = await testWorkspace({
    tokens: options.tokens,
    parent: options.parent,
    config: `cli: claude\nroles:\n  backend: {}\n  qa: {}\n${trackers}${extra}`,
  });
  return Object.assign(ws, { env, secret: (t: string) => Deno.env.get(env[t]) ?? "" });
}

export interface Delivery {
  body: string | Uint8Array<ArrayBuffer>;
  secret?: string;
  id?: string | null;
  signature?: string | null;
  headers?: Record<string, string>;
  /** tracker_b's `X-GitHub-Event` (default `issues`, as GitHub names an issue event; null: none). */
  event?: string | null;
}

/** POST a delivery signed the way `adapter` signs (unless a signature is given). */
export async function deliver(ws: TestWorkspace, adapter: string, d: Delivery) {
  const t = TRACKERS[adapter] ?? TRACKERS.tracker_b;
  const headers: Record<string, string> = { "content-type": "application/json" };
  const event = d.event === undefined ? "issues" : d.event;
  if (adapter === "tracker_b" && event !== null) headers["X-GitHub-Event"] = event;
  Object.assign(headers, d.headers);
  const sig = d.signature === undefined ? signBody(t.scheme, d.secret ?? "", d.body) : d.signature;
  if (sig !== null) headers[t.sig] = sig;
  if (d.id !== null) headers[t.id] = d.id ?? crypto.randomUUID();
  const res = await ws.app.request(`/webhooks/trackers/${adapter}`, {
    method: "POST",
    headers,
    body: d.body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
