/**
 * The credentials the service hands its agents (docs/security.md "Agents"): one per agent
 * session, minted whatever the auth configuration, bound to one workspace, run, task and
 * session, of scope `agent` — reads, and the heartbeat, completion and failure of its own task
 * while its session holds it. The secret lives in this process's memory only: never in its
 * environment (which every child it starts would inherit: quality gates, hooks, setup commands),
 * never on disk. Only its SHA-256 digest and binding are kept, in `.sdd/runtime/agent-credentials.json`
 * (mode 0600), so a restarted service still knows the credential of an agent that runs on (it is
 * adopted from a remote worker); a digest lets no one call anything.
 *
 * A remote worker's claim carries a second kind, minted the same way: the worker's capability for
 * that one session (`svcsession_…`, scope `session`, bound to the worker's name too) — its
 * heartbeat and its report. A worker's own configured token then only registers and claims.
 */
import { createHash } from "node:crypto";
import type { Principal } from "./tokens.ts";

/** Every agent credential starts so: it is told from a configured token by its look alone. */
const AGENT_CREDENTIAL_PREFIX = "svcagent_";

/** What an agent credential is bound to. */
export interface AgentBinding {
  runId: string;
  taskId: string;
  sessionId: string;
}

/** The principal of an agent credential: scope `agent`, with what it is bound to. */
export interface AgentPrincipal extends Principal {
  scope: "agent";
  run_id: string;
  task_id: string;
  session_id: string;
}

/** Every worker session capability starts so. */
export const WORKER_SESSION_PREFIX = "svcsession_";

/** The principal of a worker's session capability: scope `session`, its worker and session. */
export interface WorkerSessionPrincipal extends Principal {
  scope: "session";
  worker: string;
  run_id: string;
  task_id: string;
  session_id: string;
}

/** Either kind of minted credential. */
type Minted = AgentPrincipal | WorkerSessionPrincipal;

interface Workspace {
  /** By the SHA-256 of the credential: a lookup compares digests, never the secret itself. */
  byDigest: Map<string, Minted>;
  /** `<scope>:<session id>` → the digest of that session's credential of that kind. */
  bySession: Map<string, string>;
  /** The loopback URL of the server's agents' listener, while one listens. */
  agentUrl?: string;
}

const workspaces = new Map<string, Workspace>();

function storePath(root: string): string {
  return `${root}/.sdd/runtime/agent-credentials.json`;
}

/** The digests an earlier process of this workspace kept (none when there is no file). */
function load(root: string): Workspace {
  const w: Workspace = { byDigest: new Map(), bySession: new Map() };
  try {
    const kept = JSON.parse(Deno.readTextFileSync(storePath(root))) as Record<string, Minted>;
    for (const [d, p] of Object.entries(kept)) {
      if (typeof p?.session_id !== "string") continue;
      if (p.scope !== "agent" && !(p.scope === "session" && typeof p.worker === "string")) continue;
      w.byDigest.set(d, p);
      w.bySession.set(sessionKey(p.scope, p.session_id), d);
    }
  } catch { /* none kept, or unreadable: nothing is adopted */ }
  return w;
}

function save(root: string, w: Workspace): void {
  try {
    Deno.writeTextFileSync(storePath(root), JSON.stringify(Object.fromEntries(w.byDigest)), {
      mode: 0o600,
    });
  } catch { /* no .sdd/runtime (yet): the credential lives in memory only */ }
}

function workspace(root: string): Workspace {
  let w = workspaces.get(root);
  if (!w) {
    w = load(root);
    workspaces.set(root, w);
  }
  return w;
}

function digest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function sessionKey(scope: Minted["scope"], sessionId: string): string {
  return `${scope}:${sessionId}`;
}

/** Mint `principal`'s credential with `prefix` (one per session and kind: an older one ends). */
function mint(root: string, prefix: string, principal: Minted): string {
  const w = workspace(root);
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const token = prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const key = sessionKey(principal.scope, principal.session_id);
  const old = w.bySession.get(key);
  if (old) w.byDigest.delete(old);
  const d = digest(token);
  w.byDigest.set(d, principal);
  w.bySession.set(key, d);
  save(root, w);
  return token;
}

function revoke(root: string, scope: Minted["scope"], sessionId: string): void {
  const w = workspace(root);
  const key = sessionKey(scope, sessionId);
  const d = w.bySession.get(key);
  if (!d) return;
  w.byDigest.delete(d);
  w.bySession.delete(key);
  save(root, w);
}

/** True when `token` has the form of an agent credential (whether or not it is valid). */
export function looksLikeAgentCredential(token: string): boolean {
  return token.startsWith(AGENT_CREDENTIAL_PREFIX);
}

/**
 * The credential of `binding`'s session in the workspace at `root`: minted on first ask (32
 * random bytes), the same one after. A session has one credential; a retry is a new session.
 */
export function mintAgentCredential(root: string, binding: AgentBinding): string {
  return mint(root, AGENT_CREDENTIAL_PREFIX, {
    principal: `agent:${binding.sessionId}`,
    scope: "agent",
    run_id: binding.runId,
    task_id: binding.taskId,
    session_id: binding.sessionId,
  });
}

/** Who presents the agent credential `token` at the server of `root`; undefined when no one. */
export function agentPrincipal(root: string, token: string): AgentPrincipal | undefined {
  if (!looksLikeAgentCredential(token)) return undefined;
  const p = workspace(root).byDigest.get(digest(token));
  return p?.scope === "agent" ? p : undefined;
}

/** End the credential of `sessionId` (its agent ended, its report is in, its run stopped). */
export function revokeAgentCredential(root: string, sessionId: string): void {
  revoke(root, "agent", sessionId);
}

/** True when `token` has the form of a worker session capability (whether or not it is valid). */
export function looksLikeWorkerSessionCredential(token: string): boolean {
  return token.startsWith(WORKER_SESSION_PREFIX);
}

/**
 * The capability `worker` gets with its claim of `binding`'s session: that session's heartbeat
 * and report, nothing else (minted once per session; a claim is a new session).
 */
export function mintWorkerSessionCredential(
  root: string,
  binding: AgentBinding & { worker: string },
): string {
  return mint(root, WORKER_SESSION_PREFIX, {
    principal: `worker:${binding.worker}:${binding.sessionId}`,
    scope: "session",
    worker: binding.worker,
    run_id: binding.runId,
    task_id: binding.taskId,
    session_id: binding.sessionId,
  });
}

/** Who presents the worker session capability `token` at `root`'s server; undefined: no one. */
export function workerSessionPrincipal(
  root: string,
  token: string,
): WorkerSessionPrincipal | undefined {
  if (!looksLikeWorkerSessionCredential(token)) return undefined;
  const p = workspace(root).byDigest.get(digest(token));
  return p?.scope === "session" ? p : undefined;
}

/** End the worker's capability for `sessionId` (its report was taken). */
export function revokeWorkerSessionCredential(root: string, sessionId: string): void {
  revoke(root, "session", sessionId);
}

/**
 * End every credential (both kinds) of `runId` in `root` (the run's loop ended), but those of
 * the sessions in `keep` (agents that go on on remote workers and report to the next process).
 */
export function revokeRunCredentials(
  root: string,
  runId: string,
  keep: ReadonlySet<string> = new Set(),
): void {
  const w = workspace(root);
  for (const [d, p] of w.byDigest) {
    if (p.run_id !== runId || keep.has(p.session_id)) continue;
    w.byDigest.delete(d);
    w.bySession.delete(sessionKey(p.scope, p.session_id));
  }
  save(root, w);
}

/** The server of `root` listens for agents at `url` (undefined: it stopped). */
export function setAgentUrl(root: string, url: string | undefined): void {
  if (url === undefined) {
    const w = workspaces.get(root);
    if (w) delete w.agentUrl;
    return;
  }
  workspace(root).agentUrl = url;
}

/** The URL local agents of `root` call the task API at: the agents' listener, when one listens. */
export function agentUrlFor(root: string): string | undefined {
  return workspaces.get(root)?.agentUrl;
}
