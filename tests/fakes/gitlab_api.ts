/**
 * A local stand-in for GitLab's REST API v4 (the endpoints merge-request landing calls, shaped as
 * docs.gitlab.com documents them), backed by a real bare repository whose `pre-receive` hook
 * refuses pushes to the protected base (tests/fakes/_protected_repo.ts). `PUT
 * /projects/:id/merge_requests/:iid/merge` merges only when `sha` matches the head (else 409 "SHA
 * does not match HEAD of source branch"), the head pipeline succeeded when the project requires it
 * (`only_allow_merge_if_pipeline_succeeds`), no approvals are left, and it merges cleanly (else
 * 405/406 with GitLab's words). With `merge_trains_enabled` the merge request must go through
 * `POST /projects/:id/merge_trains/merge_requests/:iid`; the train merges it once its pipeline
 * succeeded. Tokens travel in `PRIVATE-TOKEN`; an unknown one answers 401 "401 Unauthorized".
 * Answers carry weak `ETag`s (304 on `If-None-Match`), `RateLimit-*` headers (GitLab counts every
 * request, a 304 too) and `X-Next-Page`; `detailed_merge_status` says what a merge request waits
 * for, as GitLab's does. With a webhook set, the fake delivers GitLab's "Merge Request Hook" and
 * "Pipeline Hook" with the secret token. Every request and event is logged on the fake's clock.
 */
import {
  type FakeHostEvent,
  hostAnswer,
  HostLedger,
  type HostRequest,
  type HostStats,
} from "./_host_http.ts";
import {
  type Delivery,
  gitlabHeaders,
  WebhookSender,
  type WebhookTarget,
} from "./_host_webhooks.ts";
import { protectedRepo } from "./_protected_repo.ts";

type Json = Record<string, unknown>;

/** Options of {@link startFakeGitlab}. */
export interface FakeGitlabOptions {
  /** The project path. */
  project?: string;
  base?: string;
  /** `only_allow_merge_if_pipeline_succeeds`. */
  pipelineMustSucceed?: boolean;
  /** Approvals the approval rules require. */
  approvals?: number;
  /** `merge_trains_enabled`. */
  mergeTrains?: boolean;
  /**
   * The project's `merge_method` (default `merge`): under `ff` and `rebase_merge` a merge
   * request must hold the target's tip (`detailed_merge_status: need_rebase`, else its merge
   * answers 406).
   */
  mergeMethod?: "merge" | "rebase_merge" | "ff";
  /** token → access level (30 Developer, 20 Reporter …). */
  tokens?: Record<string, number>;
  /** The pipeline status a new head gets (default `success`). */
  pipeline?: (sha: string) => "running" | "success" | "failed";
  /**
   * What a retried pipeline (`POST /pipelines/:id/retry`) of `sha` ends with, a moment after the
   * retry (`n`: the how-manieth retry; default the `pipeline` status again).
   */
  retry?: (sha: string, n: number) => "success" | "failed";
  /** Told of every event as it happens (a test plays CI and reviewers on `head`). */
  onEvent?: (event: FakeHostEvent) => void;
  /**
   * Awaited once an answer is ready, before it is sent (a test acts while the service waits for
   * it: what the service then reads is what the host said before).
   */
  holdAnswer?: (method: string, path: string) => Promise<void> | undefined;
}

/** The fake and its controls. */
export interface FakeGitlab extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/api/v4` (the `api_url`). */
  url: string;
  bare: string;
  /** Every request with its time and status. */
  log: HostRequest[];
  /** Request counts (GitLab charges every request, a 304 too). */
  stats(): HostStats;
  /** What happened, in order, on the fake's clock. */
  events: FakeHostEvent[];
  /** Deliver webhooks to `target` from now on (undefined: stop). */
  setWebhook(target: WebhookTarget | undefined): void;
  /** Webhook deliveries made. */
  deliveries: Delivery[];
  /** Resolves once every webhook delivery queued so far was answered by the receiver. */
  webhooksDelivered(): Promise<void>;
  mergeRequests(): { iid: number; state: string; source: string }[];
  /** CI: the pipeline of `sha` now has `status`. */
  setPipeline(sha: string, status: "running" | "success" | "failed"): void;
  headOf(iid: number): Promise<string>;
  approve(iid: number, user: string): void;
  /** A reviewer requests changes, with a comment. */
  requestChanges(iid: number, user: string, comment: string): void;
  /** A person comments, then closes merge request `iid` unmerged. */
  closeByPerson(iid: number, user: string, comment: string): void;
  refusedPushes(): Promise<string[]>;
}

interface FakeMr {
  iid: number;
  source: string;
  target: string;
  title: string;
  description: string;
  state: "opened" | "closed" | "merged";
  frozenSha?: string;
  mergeCommit?: string;
  closedBy?: string;
  approvedBy: string[];
  onTrain: boolean;
  notes: { id: number; author: string; body: string }[];
  /** Reviewers who requested changes. */
  requested: string[];
  /** The head the fake last saw (a new one starts a pipeline and is an `update`). */
  seenSha?: string;
}

/** Start the fake over a new bare repository holding `seed`'s HEAD as `base`. */
export async function startFakeGitlab(
  seed: string,
  options: FakeGitlabOptions = {},
): Promise<FakeGitlab> {
  const project = options.project ?? "acme/widget";
  const base = options.base ?? "main";
  const mergeMethod = options.mergeMethod ?? "merge";
  const tokens = options.tokens ?? { "glpat-token": 30 };
  const git = await protectedRepo(seed, base, "fake-gitlab-");
  const mrs: FakeMr[] = [];
  const pipelines = new Map<
    string,
    { id: number; status: string; finishedAt?: string; retries?: number }
  >();
  let nextId = 500;
  const ledger = new HostLedger(2000, true);
  const events: FakeHostEvent[] = [];
  const hooks = new WebhookSender(gitlabHeaders);
  const projectJson = { id: 7, path_with_namespace: project, name: project.split("/").pop() };

  const headSha = async (m: FakeMr) => m.frozenSha ?? await git.tip(m.source) ?? "";
  const event = (e: Omit<FakeHostEvent, "at">) => {
    const full = { at: Date.now(), ...e };
    events.push(full);
    options.onEvent?.(full);
  };
  const pipelineOf = (sha: string) => {
    let p = pipelines.get(sha);
    if (!p && sha) {
      const status = options.pipeline?.(sha) ?? "success";
      p = {
        id: nextId++,
        status,
        ...(status === "running" ? {} : { finishedAt: new Date().toISOString() }),
      };
      pipelines.set(sha, p);
    }
    return p;
  };
  const approvalsLeft = (m: FakeMr) => Math.max(0, (options.approvals ?? 0) - m.approvedBy.length);

  /** A "Merge Request Hook" delivery for `m` with `action`. */
  const mrHook = (m: FakeMr, action: string, extra: Json = {}) => {
    hooks.send(
      "Merge Request Hook",
      (async () => ({
        object_kind: "merge_request",
        event_type: "merge_request",
        user: { username: "someone" },
        project: projectJson,
        object_attributes: {
          id: m.iid * 11,
          iid: m.iid,
          source_branch: m.source,
          target_branch: m.target,
          state: m.state,
          action,
          last_commit: { id: await headSha(m) },
          detailed_merge_status: await detailedStatus(m),
          ...extra,
        },
      }))(),
    );
  };
  /** GitLab notices `m`'s head (new on opening, or after a push): a pipeline starts on it. */
  const noticeHead = async (m: FakeMr) => {
    if (m.state !== "opened") return;
    const sha = await headSha(m);
    if (!sha || m.seenSha === sha) return;
    const oldrev = m.seenSha;
    m.seenSha = sha;
    pipelineOf(sha);
    event({ kind: "head", number: m.iid, sha });
    if (oldrev !== undefined) mrHook(m, "update", { oldrev });
  };
  /** What the merge request waits for, in GitLab's words (`detailed_merge_status`). */
  const detailedStatus = async (m: FakeMr): Promise<string> => {
    if (m.state !== "opened") return "not_open";
    if (m.title.startsWith("Draft:")) return "draft_status";
    const sha = await headSha(m);
    if (!(await git.mergesCleanly(sha))) return "conflict";
    if (mergeMethod !== "merge" && !(await git.upToDate(sha))) return "need_rebase";
    if (m.requested.length > 0) return "requested_changes";
    const pipeline = pipelines.get(sha)?.status;
    if (options.pipelineMustSucceed && pipeline !== "success") {
      return pipeline === "failed" ? "ci_must_pass" : "ci_still_running";
    }
    if (approvalsLeft(m) > 0) return "not_approved";
    return "mergeable";
  };

  /** The train merges a merge request on it once its pipeline succeeded. */
  const runTrain = async (m: FakeMr) => {
    if (!m.onTrain || m.state !== "opened") return;
    const sha = await headSha(m);
    if (pipelineOf(sha)?.status !== "success" || approvalsLeft(m) > 0) return;
    const commit = await git.merge(sha, "merge", `Merge branch '${m.source}' into '${base}'`);
    if (!commit) return;
    m.frozenSha = sha;
    m.mergeCommit = commit;
    m.state = "merged";
    m.onTrain = false;
    event({ kind: "merged", number: m.iid, sha });
    mrHook(m, "merge");
  };

  const mrJson = async (m: FakeMr): Promise<Json> => {
    await noticeHead(m);
    await runTrain(m);
    const sha = await headSha(m);
    const p = m.state === "opened" ? pipelineOf(sha) : undefined;
    const conflicts = m.state === "opened" ? !(await git.mergesCleanly(sha)) : false;
    const detailed = await detailedStatus(m);
    return {
      id: m.iid * 11,
      iid: m.iid,
      project_id: 7,
      title: m.title,
      description: m.description,
      state: m.state,
      source_branch: m.source,
      target_branch: m.target,
      sha,
      draft: m.title.startsWith("Draft:"),
      work_in_progress: m.title.startsWith("Draft:"),
      has_conflicts: conflicts,
      detailed_merge_status: detailed,
      merge_commit_sha: m.state === "merged" ? m.mergeCommit : null,
      squash_commit_sha: null,
      closed_by: m.closedBy ? { username: m.closedBy } : null,
      web_url: `https://gitlab.example/${project}/-/merge_requests/${m.iid}`,
      head_pipeline: p
        ? {
          id: p.id,
          sha,
          status: p.status,
          finished_at: p.finishedAt ?? null,
          web_url: `https://gitlab.example/${project}/-/pipelines/${p.id}`,
        }
        : null,
    };
  };

  const handle = async (req: Request, url: URL): Promise<Response> => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      hostAnswer(req, status, body, { "content-type": "application/json", ...headers }, {
        weakEtag: true,
        // GitLab counts every request against its limit, a 304 included.
        rate: (notModified) => {
          const remaining = ledger.charge(notModified ? 304 : status);
          return {
            "ratelimit-limit": String(ledger.limit),
            "ratelimit-observed": String(ledger.limit - remaining),
            "ratelimit-remaining": String(remaining),
            "ratelimit-reset": String(Math.floor(Date.now() / 1000) + 60),
          };
        },
      });
    const level = tokens[req.headers.get("private-token") ?? ""];
    if (level === undefined) return json(401, { message: "401 Unauthorized" });
    const path = url.pathname.replace(/^\/api\/v4/, "");
    const body = req.method === "GET" || req.method === "DELETE"
      ? {}
      : await req.json().catch(() => ({})) as Json;
    if (path === "/personal_access_tokens/self") {
      return json(200, { id: 1, name: "landing", scopes: ["api"], active: true });
    }
    // The project's path is URL-encoded (`acme%2Fwidget`); a URL's pathname keeps it so.
    const prefix = `/projects/${encodeURIComponent(project)}`;
    if (!path.startsWith(prefix)) return json(404, { message: "404 Project Not Found" });
    const rest = path.slice(prefix.length);
    let m: RegExpExecArray | null;
    if (rest === "" && req.method === "GET") {
      return json(200, {
        id: 7,
        path_with_namespace: project,
        default_branch: base,
        only_allow_merge_if_pipeline_succeeds: options.pipelineMustSucceed === true,
        merge_trains_enabled: options.mergeTrains === true,
        merge_method: mergeMethod,
        merge_pipelines_enabled: options.mergeTrains === true,
        permissions: { project_access: { access_level: level }, group_access: null },
      });
    }
    if (rest.startsWith("/merge_requests") && level < 30) {
      return json(403, { message: "403 Forbidden" });
    }
    if (rest === "/merge_requests") {
      if (req.method === "POST") {
        const source = String(body.source_branch ?? "");
        if (!(await git.tip(source))) {
          return json(400, { message: { source_branch: ["is invalid"] } });
        }
        if (mrs.some((x) => x.source === source && x.state === "opened")) {
          return json(409, {
            message: [
              `Another open merge request already exists for this source branch: !${
                mrs.find((x) => x.source === source)!.iid
              }`,
            ],
          });
        }
        const mr: FakeMr = {
          iid: mrs.length + 1,
          source,
          target: String(body.target_branch ?? base),
          title: String(body.title ?? ""),
          description: String(body.description ?? ""),
          state: "opened",
          approvedBy: [],
          onTrain: false,
          notes: [],
          requested: [],
        };
        mrs.push(mr);
        event({ kind: "opened", number: mr.iid });
        const created = await mrJson(mr);
        mrHook(mr, "open");
        return json(201, created);
      }
      const source = url.searchParams.get("source_branch");
      const state = url.searchParams.get("state") ?? "all";
      const list = mrs.filter((x) =>
        (!source || x.source === source) && (state === "all" || x.state === state)
      );
      return json(200, await Promise.all(list.map((x) => mrJson(x))));
    }
    const mr = (iid: string) => mrs.find((x) => x.iid === Number(iid));
    if ((m = /^\/merge_requests\/(\d+)$/.exec(rest))) {
      const x = mr(m[1]);
      if (!x) return json(404, { message: "404 Not found" });
      if (req.method === "PUT" && body.state_event === "close" && x.state === "opened") {
        x.frozenSha = await headSha(x);
        x.state = "closed";
        x.closedBy = "service-bot";
        event({ kind: "closed", number: x.iid });
        mrHook(x, "close");
      }
      return json(200, await mrJson(x));
    }
    if ((m = /^\/merge_requests\/(\d+)\/approvals$/.exec(rest))) {
      const x = mr(m[1])!;
      return json(200, {
        approvals_required: options.approvals ?? 0,
        approvals_left: approvalsLeft(x),
        approved_by: x.approvedBy.map((username) => ({ user: { username } })),
      });
    }
    if ((m = /^\/merge_requests\/(\d+)\/reviewers$/.exec(rest))) {
      const x = mr(m[1]);
      if (!x) return json(404, { message: "404 Not found" });
      return json(
        200,
        x.requested.map((username) => ({ user: { username }, state: "requested_changes" })),
      );
    }
    if ((m = /^\/merge_requests\/(\d+)\/notes$/.exec(rest))) {
      const x = mr(m[1]);
      if (!x) return json(404, { message: "404 Not found" });
      if (req.method === "POST") {
        const note = { id: nextId++, author: "service-bot", body: String(body.body ?? "") };
        x.notes.push(note);
        return json(201, { id: note.id, body: note.body });
      }
      const desc = url.searchParams.get("sort") === "desc";
      const notes = x.notes.map((n) => ({
        id: n.id,
        body: n.body,
        system: false,
        author: { username: n.author },
      }));
      return json(200, desc ? notes.reverse() : notes);
    }
    if ((m = /^\/merge_requests\/(\d+)\/merge$/.exec(rest)) && req.method === "PUT") {
      const x = mr(m[1]);
      if (!x) return json(404, { message: "404 Not found" });
      event({ kind: "merge_requested", number: x.iid, sha: String(body.sha ?? "") });
      if (x.state !== "opened") return json(405, { message: "405 Method Not Allowed" });
      const sha = await headSha(x);
      if (body.sha !== undefined && body.sha !== sha) {
        return json(409, { message: "SHA does not match HEAD of source branch: " + sha });
      }
      if (options.mergeTrains) return json(405, { message: "405 Method Not Allowed" });
      if (options.pipelineMustSucceed && pipelineOf(sha)?.status !== "success") {
        return json(405, { message: "405 Method Not Allowed" });
      }
      if (approvalsLeft(x) > 0) return json(405, { message: "405 Method Not Allowed" });
      if (mergeMethod !== "merge" && !(await git.upToDate(sha))) {
        return json(406, { message: "Branch cannot be merged" });
      }
      const commit = await git.merge(
        sha,
        mergeMethod === "ff" ? "ff" : body.squash === true ? "squash" : "merge",
        `Merge branch '${x.source}' into '${base}'`,
      );
      if (!commit) return json(406, { message: "Branch cannot be merged" });
      x.frozenSha = sha;
      x.mergeCommit = commit;
      x.state = "merged";
      event({ kind: "merged", number: x.iid, sha });
      mrHook(x, "merge");
      return json(200, await mrJson(x));
    }
    if ((m = /^\/merge_trains\/merge_requests\/(\d+)$/.exec(rest))) {
      const x = mr(m[1]);
      if (!x) return json(404, { message: "404 Not found" });
      if (req.method === "POST") {
        if (body.sha !== undefined && body.sha !== await headSha(x)) {
          return json(409, { message: "SHA does not match HEAD of source branch" });
        }
        x.onTrain = true;
        return json(201, [{ id: nextId++, status: "idle", merge_request: { iid: x.iid } }]);
      }
      await runTrain(x);
      if (!x.onTrain && x.state !== "merged") return json(404, { message: "404 Not found" });
      return json(200, {
        id: x.iid,
        status: x.state === "merged" ? "merged" : "fresh",
        merge_request: { iid: x.iid },
      });
    }
    if ((m = /^\/pipelines\/(\d+)\/retry$/.exec(rest)) && req.method === "POST") {
      const id = Number(m[1]);
      const entry = [...pipelines].find(([, p]) => p.id === id);
      if (!entry) return json(404, { message: "404 Not found" });
      const [sha, p] = entry;
      const n = (p.retries ?? 0) + 1;
      p.retries = n;
      event({ kind: "rerun", sha, detail: "pipeline" });
      setPipeline(sha, "running");
      setTimeout(
        () => setPipeline(sha, options.retry?.(sha, n) ?? options.pipeline?.(sha) ?? "success"),
        50,
      );
      return json(201, { id, sha, status: "running" });
    }
    if ((m = /^\/pipelines\/(\d+)\/jobs/.exec(rest))) {
      return json(200, [{
        id: 1,
        name: "test",
        stage: "test",
        status: "failed",
        failure_reason: "script_failure",
        web_url: `https://gitlab.example/${project}/-/jobs/1`,
      }]);
    }
    if ((m = /^\/repository\/branches\/(.+)$/.exec(rest)) && req.method === "GET") {
      const name = decodeURIComponent(m[1]);
      const sha = await git.tip(name);
      if (!sha) return json(404, { message: "404 Branch Not Found" });
      return json(200, {
        name,
        protected: name === base,
        default: name === base,
        commit: { id: sha, short_id: sha.slice(0, 8) },
      });
    }
    if ((m = /^\/repository\/branches\/(.+)$/.exec(rest)) && req.method === "DELETE") {
      return (await git.deleteBranch(decodeURIComponent(m[1])))
        ? json(204, {})
        : json(404, { message: "404 Branch Not Found" });
    }
    return json(404, { message: "404 Not Found" });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const at = Date.now();
    const url = new URL(req.url);
    let res: Response;
    try {
      res = await handle(req, url);
    } catch (e) {
      res = Response.json({ message: `fake: ${(e as Error).message}` }, { status: 500 });
    }
    await options.holdAnswer?.(req.method, url.pathname);
    ledger.record(at, req.method, url.pathname, res.status);
    return res;
  });
  const mrOf = (iid: number) => mrs.find((x) => x.iid === iid)!;
  /** CI: the pipeline of `sha` now has `status` (its webhook delivered). */
  function setPipeline(sha: string, status: "running" | "success" | "failed") {
    const p = pipelineOf(sha)!;
    p.status = status;
    if (status !== "running") p.finishedAt = new Date().toISOString();
    event({ kind: "check", sha, detail: `pipeline:${status}` });
    const on = mrs.find((x) => x.state === "opened" && x.seenSha === sha);
    hooks.send("Pipeline Hook", {
      object_kind: "pipeline",
      object_attributes: {
        id: p.id,
        ref: on?.source ?? "",
        sha,
        status,
        source: on ? "merge_request_event" : "push",
      },
      ...(on
        ? {
          merge_request: {
            id: on.iid * 11,
            iid: on.iid,
            source_branch: on.source,
            target_branch: on.target,
          },
        }
        : {}),
      project: projectJson,
    });
  }

  return {
    url: `http://127.0.0.1:${server.addr.port}/api/v4`,
    bare: git.bare,
    log: ledger.log,
    stats: () => ledger.stats(),
    events,
    setWebhook: (target) => hooks.setTarget(target),
    deliveries: hooks.delivered,
    webhooksDelivered: () => hooks.settled(),
    mergeRequests: () => mrs.map((x) => ({ iid: x.iid, state: x.state, source: x.source })),
    setPipeline,
    headOf: async (iid) => await headSha(mrOf(iid)),
    approve(iid, user) {
      const x = mrOf(iid);
      x.approvedBy.push(user);
      event({ kind: "review", number: iid, detail: "approved" });
      mrHook(x, approvalsLeft(x) === 0 ? "approved" : "approval");
    },
    requestChanges(iid, user, comment) {
      const x = mrOf(iid);
      x.notes.push({ id: nextId++, author: user, body: comment });
      x.requested.push(user);
      event({ kind: "review", number: iid, detail: "requested_changes" });
      mrHook(x, "update");
    },
    closeByPerson(iid, user, comment) {
      const x = mrOf(iid);
      x.notes.push({ id: nextId++, author: user, body: comment });
      x.state = "closed";
      x.closedBy = user;
      event({ kind: "closed", number: iid });
      mrHook(x, "close");
    },
    refusedPushes: git.refusedPushes,
    async [Symbol.asyncDispose]() {
      hooks.setTarget(undefined);
      await hooks.settled();
      await server.shutdown();
      await git.remove();
    },
  };
}
