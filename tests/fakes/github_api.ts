/**
 * A local stand-in for GitHub's REST API v3 (the endpoints pull-request landing calls, shaped as
 * docs.github.com documents them for API version 2022-11-28), backed by a real bare git
 * repository. The bare repository's `pre-receive` hook refuses any push to the protected base
 * branch, so a service that pushes to `main` fails the test; the fake itself moves `main` only
 * when `PUT /repos/{repo}/pulls/{n}/merge` is allowed: the `sha` guard matches the head (else
 * 409 "Head branch was modified"), every required status check is green on the head and enough
 * approving reviews were given (else 405 with GitHub's words), and the merge is clean.
 *
 * Answers carry `ETag` (a repeated GET with `If-None-Match` gets 304 with no body) and the
 * rate-limit headers, counted as GitHub counts them (a 304 costs nothing); lists honour
 * `per_page`/`page` with a `Link: rel="next"` header. Tokens are Bearer tokens; a token without
 * `pull_requests` answers 403 with `X-Accepted-GitHub-Permissions`, an unknown one 401 "Bad
 * credentials". Tests play CI (check runs and commit statuses) and people through
 * {@link FakeGithub}'s methods; with a webhook set, the fake delivers what GitHub would
 * (`pull_request`, `pull_request_review`, `check_run`, `check_suite`, `status`), signed. Every
 * request and event is logged on the fake's own clock.
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
  githubHeaders,
  WebhookSender,
  type WebhookTarget,
} from "./_host_webhooks.ts";
import { protectedRepo } from "./_protected_repo.ts";

type Json = Record<string, unknown>;

/** What a token may do. */
export interface FakeToken {
  /** Contents: write (push). */
  push: boolean;
  /** Pull requests: read and write. */
  pullRequests: boolean;
}

/** One check run the fake's CI reports on a commit. */
export interface FakeCheck {
  name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion?: "success" | "failure" | "neutral";
  summary?: string;
  /**
   * The app that reports it (default `ci-bot`): `github-actions` checks are re-run through
   * `POST …/actions/jobs/{id}/rerun` (a new check run), others through `POST
   * …/check-runs/{id}/rerequest` (the same check run, queued again).
   */
  app?: string;
}

/** A check run as the fake keeps it. */
interface StoredCheck extends FakeCheck {
  id: number;
  completedAt?: string;
}

interface FakePull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  state: "open" | "closed";
  merged: boolean;
  mergeCommit?: string;
  closedBy?: string;
  labels: string[];
  /** The head tip when the pull request was closed or merged (GitHub keeps it). */
  frozenHead?: string;
  /** The head the fake last saw (a new one starts CI and is a `synchronize`). */
  seenHead?: string;
}

/** One commit status (`POST /repos/{repo}/statuses/{sha}` in GitHub's terms). */
export interface FakeStatus {
  context: string;
  state: "pending" | "success" | "failure" | "error";
  description?: string;
}

interface FakeReview {
  id: number;
  pull: number;
  user: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  body: string;
  commit: string;
}

/** Options of {@link startFakeGithub}. */
export interface FakeGithubOptions {
  /** `owner/name`. */
  repo?: string;
  /** The protected base branch. */
  base?: string;
  /** Required status checks of the base's branch protection. */
  requiredChecks?: string[];
  /** Approving reviews the base's branch protection requires. */
  approvals?: number;
  /**
   * `required_status_checks.strict` ("Require branches to be up to date before merging"): a
   * pull request whose head does not hold the base's tip is `behind` and its merge answers 405.
   */
  strict?: boolean;
  /** The token may not read the branch protection (no Administration: Read): 403 there. */
  hideProtection?: boolean;
  /**
   * A ruleset requires a merge queue: `PUT …/merge` answers 405, GraphQL `enqueuePullRequest`
   * queues it, and the queue merges it once its checks and reviews allow.
   */
  mergeQueue?: boolean;
  tokens?: Record<string, FakeToken>;
  /**
   * The fake CI: the checks a head commit gets when GitHub first sees it on a pull request
   * (default: every required check completes with success at once).
   */
  ci?: (sha: string, files: string[]) => FakeCheck[];
  /**
   * What a re-run of check `name` on `sha` reports (`n`: the how-manieth re-run of it), a moment
   * after it was asked for (default: the `ci` result of that name again).
   */
  rerun?: (sha: string, name: string, n: number) => FakeCheck;
  /**
   * Awaited when `POST /pulls` arrives, before the pull request is created (a test kills the
   * service meanwhile: GitHub still creates it, and the answer is lost).
   */
  beforeCreate?: () => Promise<void>;
  /** Awaited after a merge through `PUT …/merge`, before GitHub answers (a test kills meanwhile). */
  afterMerge?: () => Promise<void>;
  /** Told of every event as it happens (a test plays CI and reviewers on `head`). */
  onEvent?: (event: FakeHostEvent) => void;
  /**
   * Awaited once an answer is ready, before it is sent (a test acts while the service waits for
   * it: what the service then reads is what the host said before).
   */
  holdAnswer?: (method: string, path: string) => Promise<void> | undefined;
}

/** The fake and its controls. */
export interface FakeGithub extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` (the `api_url`). */
  url: string;
  /** The bare repository (a workspace's `origin`). */
  bare: string;
  /** Every request, as `METHOD path`. */
  requests: string[];
  /** Every request with its time and status. */
  log: HostRequest[];
  /** Request counts (GitHub charges no 304 to the rate limit). */
  stats(): HostStats;
  /** What happened, in order, on the fake's clock. */
  events: FakeHostEvent[];
  /** Deliver webhooks to `target` from now on (undefined: stop). */
  setWebhook(target: WebhookTarget | undefined): void;
  /** Webhook deliveries made. */
  deliveries: Delivery[];
  /** Resolves once every webhook delivery queued so far was answered by the receiver. */
  webhooksDelivered(): Promise<void>;
  /** Pull requests opened so far. */
  pulls(): {
    number: number;
    head: string;
    state: string;
    merged: boolean;
    title: string;
    body: string;
  }[];
  /** Report check `name` on `sha` (CI finished, or started again). */
  setCheck(sha: string, check: FakeCheck): void;
  /** Report commit status `context` on `sha`. */
  setStatus(sha: string, status: FakeStatus): void;
  /** The head commit of pull request `n` now. */
  headOf(n: number): Promise<string>;
  /** A reviewer's review. */
  review(n: number, user: string, state: FakeReview["state"], body?: string): Promise<void>;
  /** A person closes pull request `n` unmerged, after a comment. */
  closeByPerson(n: number, user: string, comment: string): Promise<void>;
  /** While down, every API call answers 502 (GitHub blinking); git still works. */
  setDown(down: boolean): void;
  /** Pushes the `pre-receive` hook refused (a service pushing to the base). */
  refusedPushes(): Promise<string[]>;
  /** Every ref update pushed and accepted, as `old new ref`. */
  pushes(): Promise<string[]>;
}

/** Start the fake over a new bare repository holding `seed`'s branch `base`. */
export async function startFakeGithub(
  seed: string,
  options: FakeGithubOptions = {},
): Promise<FakeGithub> {
  const repo = options.repo ?? "acme/widget";
  const base = options.base ?? "main";
  const required = options.requiredChecks ?? [];
  const approvals = options.approvals ?? 0;
  const strict = options.strict === true;
  const tokens = options.tokens ?? { "gh-token": { push: true, pullRequests: true } };
  const ci = options.ci ??
    (() =>
      required.map((name) => ({
        name,
        status: "completed" as const,
        conclusion: "success" as const,
      })));

  const git = await protectedRepo(seed, base, "fake-github-");
  const bare = git.bare;
  const pulls: FakePull[] = [];
  const reviews: FakeReview[] = [];
  const comments = new Map<number, { user: string; body: string }[]>();
  const checks = new Map<string, StoredCheck[]>();
  const reruns = new Map<string, number>();
  let nextCheckId = 1;
  const statuses = new Map<string, FakeStatus[]>();
  const seen = new Set<string>();
  const requests: string[] = [];
  const ledger = new HostLedger(5000, false);
  const events: FakeHostEvent[] = [];
  const hooks = new WebhookSender(githubHeaders);
  let down = false;
  /** Pull request numbers in the merge queue, in order. */
  const queue: number[] = [];
  let nextId = 1000;
  const owner = repo.split("/")[0];

  const tip = git.tip;
  const headSha = async (p: FakePull) => p.frozenHead ?? await tip(p.head) ?? "";
  const event = (e: Omit<FakeHostEvent, "at">) => {
    const full = { at: Date.now(), ...e };
    events.push(full);
    options.onEvent?.(full);
  };
  const repository = { id: 9, full_name: repo, name: repo.split("/")[1], owner: { login: owner } };

  /** A pull request as webhook payloads carry it. */
  const hookPull = async (p: FakePull) => ({
    number: p.number,
    state: p.state,
    merged: p.merged,
    draft: p.draft,
    head: { ref: p.head, sha: await headSha(p) },
    base: { ref: p.base, sha: await tip(p.base) },
  });
  /** The open pull requests whose head is `sha` (as check and status payloads list them). */
  const pullsAt = async (sha: string) => {
    const out = [];
    for (const p of pulls) {
      if (p.state === "open" && await headSha(p) === sha) out.push(p);
    }
    return out;
  };

  /** The fake CI sees a head for the first time. */
  const runCi = async (sha: string) => {
    if (!sha || seen.has(sha)) return;
    seen.add(sha);
    for (const c of ci(sha, await git.changedFiles(sha))) setCheck(sha, c);
  };
  /** The host notices `p`'s head (new on opening, or after a push): CI starts on it. */
  const noticeHead = async (p: FakePull) => {
    if (p.state !== "open") return;
    const sha = await headSha(p);
    if (!sha || p.seenHead === sha) return;
    const pushed = p.seenHead !== undefined;
    p.seenHead = sha;
    event({ kind: "head", number: p.number, sha });
    if (pushed) {
      hooks.send("pull_request", {
        action: "synchronize",
        number: p.number,
        pull_request: await hookPull(p),
        repository,
      });
    }
    await runCi(sha);
  };
  const setCheck = (sha: string, reported: FakeCheck, fresh = false) => {
    const earlier = (checks.get(sha) ?? []).find((c) => c.name === reported.name);
    // A report on a named check updates its run (queued → completed); a re-run job is a new one.
    const check: StoredCheck = {
      app: earlier?.app ?? "ci-bot",
      ...reported,
      id: earlier && !fresh ? earlier.id : nextCheckId++,
      ...(reported.status === "completed" ? { completedAt: new Date().toISOString() } : {}),
    };
    const list = (checks.get(sha) ?? []).filter((c) => c.name !== check.name);
    list.push(check);
    checks.set(sha, list);
    event({ kind: "check", sha, detail: `${check.name}:${check.conclusion ?? check.status}` });
    const done = (c: FakeCheck) => c.status === "completed";
    const suite = async () => {
      const prs = await Promise.all((await pullsAt(sha)).map(async (p) => ({
        number: p.number,
        head: { ref: p.head, sha },
        base: { ref: p.base, sha: await tip(p.base) },
      })));
      return { id: 77, head_sha: sha, head_branch: prs[0]?.head.ref ?? null, pull_requests: prs };
    };
    hooks.send(
      "check_run",
      (async () => ({
        action: done(check) ? "completed" : "created",
        check_run: {
          id: check.id,
          name: check.name,
          head_sha: sha,
          status: check.status,
          conclusion: done(check) ? check.conclusion ?? "success" : null,
          check_suite: await suite(),
          pull_requests: (await suite()).pull_requests,
        },
        repository,
      }))(),
    );
    if (done(check) && list.every(done)) {
      hooks.send(
        "check_suite",
        (async () => ({
          action: "completed",
          check_suite: {
            ...(await suite()),
            status: "completed",
            conclusion: list.some((c) => c.conclusion === "failure") ? "failure" : "success",
          },
          repository,
        }))(),
      );
    }
  };
  const setStatus = (sha: string, status: FakeStatus) => {
    const list = (statuses.get(sha) ?? []).filter((s) => s.context !== status.context);
    list.push(status);
    statuses.set(sha, list);
    event({ kind: "status", sha, detail: `${status.context}:${status.state}` });
    hooks.send(
      "status",
      (async () => ({
        id: nextId++,
        sha,
        name: repo,
        context: status.context,
        state: status.state,
        description: status.description ?? null,
        target_url: null,
        branches: (await pullsAt(sha)).map((p) => ({ name: p.head, commit: { sha } })),
        repository,
      }))(),
    );
  };
  /** CI runs `c` again on `sha`: queued now (a new run for an Actions job), its result soon. */
  const rerunCheck = (sha: string, c: StoredCheck, actions: boolean) => {
    const key = `${sha}\0${c.name}`;
    const n = (reruns.get(key) ?? 0) + 1;
    reruns.set(key, n);
    event({ kind: "rerun", sha, detail: c.name });
    setCheck(sha, { name: c.name, status: "queued", app: c.app }, actions);
    setTimeout(async () => {
      const result = options.rerun?.(sha, c.name, n) ??
        ci(sha, await git.changedFiles(sha)).find((x) => x.name === c.name) ??
        { name: c.name, status: "completed" as const, conclusion: "success" as const };
      setCheck(sha, { ...result, app: c.app });
    }, 50);
  };
  /** Whether required context `name` passed on `sha` (a check run or a commit status). */
  const requiredState = (sha: string, name: string): "success" | "failure" | "pending" => {
    const c = (checks.get(sha) ?? []).find((c) => c.name === name);
    if (c) {
      if (c.status !== "completed") return "pending";
      return c.conclusion === "failure" ? "failure" : "success";
    }
    const s = (statuses.get(sha) ?? []).find((s) => s.context === name);
    if (!s || s.state === "pending") return "pending";
    return s.state === "success" ? "success" : "failure";
  };

  const prJson = async (p: FakePull, url: string): Promise<Json> => {
    await noticeHead(p);
    await runQueue(p);
    const sha = await headSha(p);
    const mergeable = p.state === "open" ? await git.mergesCleanly(sha) : null;
    const behind = p.state === "open" && strict && !(await git.upToDate(sha));
    return {
      url: `${url}/repos/${repo}/pulls/${p.number}`,
      id: p.number * 7,
      node_id: `PR_${p.number}`,
      html_url: `https://github.example/${repo}/pull/${p.number}`,
      number: p.number,
      state: p.state,
      title: p.title,
      body: p.body,
      draft: p.draft,
      merged: p.merged,
      merged_at: p.merged ? "2026-01-01T00:00:00Z" : null,
      merge_commit_sha: p.mergeCommit ?? null,
      mergeable,
      mergeable_state: mergeable === false ? "dirty" : behind ? "behind" : "clean",
      labels: p.labels.map((name) => ({ name })),
      head: { ref: p.head, sha, label: `${owner}:${p.head}` },
      base: { ref: p.base, sha: await tip(p.base), label: `${owner}:${p.base}` },
    };
  };

  /** Why `p` at `sha` may not merge (GitHub's words), or undefined. */
  const blocker = async (p: FakePull, sha: string): Promise<string | undefined> => {
    for (const name of required) {
      const state = requiredState(sha, name);
      if (state !== "success") {
        return `Required status check "${name}" is ${
          state === "failure" ? "failing" : "expected"
        }.`;
      }
    }
    const approved = latestReviews(p.number).filter((r) => r.state === "APPROVED").length;
    if (approved < approvals) {
      return `At least ${approvals} approving review${
        approvals === 1 ? " is" : "s are"
      } required by reviewers with write access.`;
    }
    if (!(await git.mergesCleanly(sha))) return "Pull Request is not mergeable";
    if (strict && !(await git.upToDate(sha))) {
      return "Head branch is not up to date with the base branch";
    }
    return undefined;
  };

  /** The merge queue merges `p` once nothing blocks it. */
  const runQueue = async (p: FakePull) => {
    if (!queue.includes(p.number) || p.state !== "open") return;
    const sha = await headSha(p);
    if (await blocker(p, sha)) return;
    const commit = await git.merge(sha, "squash", `${p.title} (#${p.number})`);
    if (!commit) return;
    queue.splice(queue.indexOf(p.number), 1);
    p.frozenHead = sha;
    p.state = "closed";
    p.merged = true;
    p.mergeCommit = commit;
    closed(p, "merged");
  };
  /** `p` was merged or closed: the event, and the `pull_request` delivery. */
  const closed = (p: FakePull, kind: "merged" | "closed") => {
    event({ kind, number: p.number, sha: p.frozenHead });
    hooks.send(
      "pull_request",
      (async () => ({
        action: "closed",
        number: p.number,
        pull_request: await hookPull(p),
        repository,
      }))(),
    );
  };

  const latestReviews = (n: number) => {
    const latest = new Map<string, FakeReview>();
    for (const r of reviews.filter((r) => r.pull === n)) {
      if (r.state === "COMMENTED" && latest.has(r.user)) continue;
      latest.set(r.user, r);
    }
    return [...latest.values()];
  };

  const handle = async (req: Request, url: URL): Promise<Response> => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      hostAnswer(req, status, body, {
        "content-type": "application/json; charset=utf-8",
        "x-github-api-version-selected": "2022-11-28",
        ...headers,
      }, {
        // GitHub: "a 304 response does not count against your primary rate limit".
        rate: (notModified) => {
          const remaining = notModified ? ledger.charge(304) : ledger.charge(status);
          return {
            "x-ratelimit-limit": String(ledger.limit),
            "x-ratelimit-remaining": String(remaining),
            "x-ratelimit-used": String(ledger.limit - remaining),
            "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
            "x-ratelimit-resource": "core",
          };
        },
      });
    const auth = /^(?:Bearer|token) (.+)$/.exec(req.headers.get("authorization") ?? "");
    const token = auth ? tokens[auth[1]] : undefined;
    if (!token) {
      return json(401, {
        message: "Bad credentials",
        documentation_url: "https://docs.github.com/rest",
        status: "401",
      });
    }
    const path = url.pathname;
    if (path === "/graphql" && req.method === "POST") return await graphql(req, json);
    const prefix = `/repos/${repo}`;
    if (!path.startsWith(prefix)) return json(404, { message: "Not Found", status: "404" });
    const rest = path.slice(prefix.length);
    const body = req.method === "GET" || req.method === "DELETE"
      ? {}
      : await req.json().catch(() => ({})) as Json;
    const needPulls = () =>
      json(403, { message: "Resource not accessible by personal access token", status: "403" }, {
        "x-accepted-github-permissions": "pull_requests=read",
      });
    const page = <T>(items: T[]) => {
      const per = Math.min(100, Number(url.searchParams.get("per_page") ?? 30));
      const n = Math.max(1, Number(url.searchParams.get("page") ?? 1));
      const slice = items.slice((n - 1) * per, n * per);
      const headers: Record<string, string> = {};
      if (n * per < items.length) {
        const next = new URL(url);
        next.searchParams.set("page", String(n + 1));
        headers.link = `<${next}>; rel="next"`;
      }
      return { slice, headers };
    };
    let m: RegExpExecArray | null;

    if (rest === "" && req.method === "GET") {
      return json(200, {
        full_name: repo,
        default_branch: base,
        permissions: { admin: false, maintain: false, push: token.push, triage: true, pull: true },
      });
    }
    if ((m = /^\/rules\/branches\/(.+)$/.exec(rest))) {
      return json(
        200,
        options.mergeQueue && decodeURIComponent(m[1]) === base
          ? [{
            type: "merge_queue",
            ruleset_source_type: "Repository",
            ruleset_source: repo,
            ruleset_id: 1,
            parameters: { merge_method: "SQUASH", grouping_strategy: "ALLGREEN" },
          }]
          : [],
      );
    }
    if ((m = /^\/branches\/(.+)\/protection$/.exec(rest))) {
      if (decodeURIComponent(m[1]) !== base) {
        return json(404, { message: "Branch not protected", status: "404" });
      }
      if (options.hideProtection) {
        return json(403, { message: "Resource not accessible by personal access token" }, {
          "x-accepted-github-permissions": "administration=read",
        });
      }
      return json(200, {
        required_status_checks: {
          strict,
          contexts: required,
          checks: required.map((context) => ({ context, app_id: null })),
        },
        ...(approvals > 0
          ? {
            required_pull_request_reviews: {
              dismiss_stale_reviews: false,
              required_approving_review_count: approvals,
            },
          }
          : {}),
        enforce_admins: { enabled: true },
      });
    }
    if ((m = /^\/branches\/([^/]+)$/.exec(rest)) && req.method === "GET") {
      // What anyone with read access sees of a branch's protection (never `strict`).
      const branch = decodeURIComponent(m[1]);
      const sha = await tip(branch);
      if (!sha) return json(404, { message: "Branch not found", status: "404" });
      const guarded = branch === base;
      return json(200, {
        name: branch,
        commit: { sha },
        protected: guarded,
        protection: guarded
          ? {
            enabled: true,
            required_status_checks: {
              enforcement_level: "everyone",
              contexts: required,
              checks: required.map((context) => ({ context, app_id: null })),
            },
          }
          : { enabled: false, required_status_checks: { enforcement_level: "off", contexts: [] } },
      });
    }
    if ((m = /^\/git\/ref\/heads\/(.+)$/.exec(rest)) && req.method === "GET") {
      const branch = m[1].split("/").map(decodeURIComponent).join("/");
      const sha = await tip(branch);
      if (!sha) return json(404, { message: "Not Found", status: "404" });
      return json(200, {
        ref: `refs/heads/${branch}`,
        node_id: `REF_${branch}`,
        url: `${url.origin}${prefix}/git/refs/heads/${branch}`,
        object: { sha, type: "commit", url: `${url.origin}${prefix}/git/commits/${sha}` },
      });
    }
    if ((m = /^\/commits\/([^/]+)\/check-runs$/.exec(rest))) {
      const sha = await git.resolve(m[1]);
      const runs = (checks.get(sha) ?? []).map((c) => ({
        id: c.id,
        name: c.name,
        head_sha: sha,
        status: c.status,
        conclusion: c.status === "completed" ? c.conclusion ?? "success" : null,
        completed_at: c.completedAt ?? null,
        html_url: `https://github.example/${repo}/runs/${c.id}`,
        app: { slug: c.app ?? "ci-bot" },
        output: { title: c.name, summary: c.summary ?? "", text: null },
      }));
      return json(200, { total_count: runs.length, check_runs: runs });
    }
    const rerunMatch = /^\/check-runs\/(\d+)\/rerequest$/.exec(rest) ??
      /^\/actions\/jobs\/(\d+)\/rerun$/.exec(rest);
    if (rerunMatch && req.method === "POST") {
      const id = Number(rerunMatch[1]);
      const found = [...checks].flatMap(([sha, list]) =>
        list.filter((c) =>
          c.id === id
        ).map((c) => ({ sha, c }))
      )[0];
      const actions = rest.startsWith("/actions/");
      if (!found || (found.c.app === "github-actions") !== actions) {
        return json(404, { message: "Not Found", status: "404" });
      }
      if (found.c.status !== "completed") {
        return json(403, { message: "This check run is not rerequestable", status: "403" });
      }
      rerunCheck(found.sha, found.c, actions);
      return json(201, {});
    }
    if ((m = /^\/commits\/([^/]+)\/status$/.exec(rest))) {
      const sha = await git.resolve(m[1]);
      const list = (statuses.get(sha) ?? []).map((s, i) => ({
        id: i + 1,
        context: s.context,
        state: s.state,
        description: s.description ?? null,
        target_url: null,
      }));
      const state = list.some((s) => s.state === "failure" || s.state === "error")
        ? "failure"
        : list.length > 0 && list.every((s) => s.state === "success")
        ? "success"
        : "pending";
      return json(200, { state, sha, statuses: list, total_count: list.length });
    }
    if (!token.pullRequests && /^\/(pulls|issues)/.test(rest)) return needPulls();
    if (rest === "/pulls" && req.method === "GET") {
      const head = url.searchParams.get("head");
      const state = url.searchParams.get("state") ?? "open";
      const list = pulls.filter((p) =>
        (!head || `${owner}:${p.head}` === head) && (state === "all" || p.state === state)
      );
      const { slice, headers } = page(list);
      return json(200, await Promise.all(slice.map((p) => prJson(p, url.origin))), headers);
    }
    if (rest === "/pulls" && req.method === "POST") {
      if (!token.push) return needPulls();
      await options.beforeCreate?.();
      const head = String(body.head ?? "");
      const headTip = await tip(head);
      if (!headTip) {
        return json(422, {
          message: "Validation Failed",
          errors: [{ resource: "PullRequest", field: "head", code: "invalid" }],
          status: "422",
        });
      }
      const into = String(body.base ?? base);
      if (!(await git.hasCommits(headTip))) {
        // GitHub's answer to a head the base already holds.
        return json(422, {
          message: "Validation Failed",
          errors: [{
            resource: "PullRequest",
            code: "custom",
            message: `No commits between ${into} and ${head}`,
          }],
          status: "422",
        });
      }
      if (pulls.some((p) => p.head === head && p.state === "open")) {
        return json(422, {
          message: "Validation Failed",
          errors: [{
            resource: "PullRequest",
            code: "custom",
            message: `A pull request already exists for ${owner}:${head}.`,
          }],
          status: "422",
        });
      }
      const p: FakePull = {
        number: pulls.length + 1,
        head,
        base: String(body.base ?? base),
        title: String(body.title ?? ""),
        body: String(body.body ?? ""),
        draft: body.draft === true,
        state: "open",
        merged: false,
        labels: [],
      };
      pulls.push(p);
      event({ kind: "opened", number: p.number });
      const created = await prJson(p, url.origin);
      hooks.send("pull_request", {
        action: "opened",
        number: p.number,
        pull_request: await hookPull(p),
        repository,
      });
      return json(201, created);
    }
    const pull = (n: string) => pulls.find((p) => p.number === Number(n));
    if ((m = /^\/pulls\/(\d+)$/.exec(rest))) {
      const p = pull(m[1]);
      if (!p) return json(404, { message: "Not Found", status: "404" });
      if (req.method === "PATCH" && body.state === "closed" && p.state === "open") {
        p.frozenHead = await headSha(p);
        p.state = "closed";
        p.closedBy = "service-bot";
        closed(p, "closed");
      }
      return json(200, await prJson(p, url.origin));
    }
    if ((m = /^\/pulls\/(\d+)\/reviews$/.exec(rest))) {
      const list = reviews.filter((r) => r.pull === Number(m![1])).map((r) => ({
        id: r.id,
        user: { login: r.user },
        body: r.body,
        state: r.state,
        commit_id: r.commit,
      }));
      const { slice, headers } = page(list);
      return json(200, slice, headers);
    }
    if ((m = /^\/pulls\/(\d+)\/reviews\/(\d+)\/comments$/.exec(rest))) return json(200, []);
    if ((m = /^\/pulls\/(\d+)\/merge$/.exec(rest)) && req.method === "PUT") {
      const p = pull(m[1]);
      if (!p) return json(404, { message: "Not Found", status: "404" });
      event({ kind: "merge_requested", number: p.number, sha: String(body.sha ?? "") });
      if (!token.push) {
        return json(403, { message: "Resource not accessible by personal access token" }, {
          "x-accepted-github-permissions": "contents=write",
        });
      }
      if (p.state !== "open") return json(405, { message: "Pull Request is not mergeable" });
      const sha = await headSha(p);
      if (body.sha !== undefined && body.sha !== sha) {
        return json(409, { message: "Head branch was modified. Review and try the merge again." });
      }
      if (options.mergeQueue) {
        return json(405, { message: "Changes must be made through the merge queue" });
      }
      const blocked = await blocker(p, sha);
      if (blocked) return json(405, { message: blocked });
      const method = String(body.merge_method ?? "merge");
      const commit = await git.merge(sha, method, `${p.title} (#${p.number})`);
      if (!commit) return json(409, { message: "Base branch was modified. Try again." });
      p.frozenHead = sha;
      p.state = "closed";
      p.merged = true;
      p.mergeCommit = commit;
      closed(p, "merged");
      await options.afterMerge?.();
      return json(200, { sha: commit, merged: true, message: "Pull Request successfully merged" });
    }
    if ((m = /^\/issues\/(\d+)$/.exec(rest))) {
      const p = pull(m[1]);
      if (!p) return json(404, { message: "Not Found", status: "404" });
      return json(200, {
        number: p.number,
        state: p.state,
        closed_by: p.closedBy ? { login: p.closedBy } : null,
        pull_request: { url: `${url.origin}${prefix}/pulls/${p.number}` },
      });
    }
    if ((m = /^\/issues\/(\d+)\/comments$/.exec(rest))) {
      const n = Number(m[1]);
      if (req.method === "POST") {
        const list = comments.get(n) ?? [];
        list.push({ user: "service-bot", body: String(body.body ?? "") });
        comments.set(n, list);
        return json(201, { id: nextId++, body: body.body });
      }
      const { slice, headers } = page(
        (comments.get(n) ?? []).map((c, i) => ({
          id: i + 1,
          user: { login: c.user },
          body: c.body,
        })),
      );
      return json(200, slice, headers);
    }
    if ((m = /^\/issues\/(\d+)\/labels$/.exec(rest))) {
      const p = pull(m[1]);
      if (p) p.labels.push(...(body.labels as string[] ?? []));
      return json(200, (p?.labels ?? []).map((name) => ({ name })));
    }
    if ((m = /^\/git\/refs\/heads\/(.+)$/.exec(rest)) && req.method === "DELETE") {
      const branch = decodeURIComponent(m[1]);
      if (branch === base) return json(422, { message: "Cannot delete protected branch" });
      return (await git.deleteBranch(branch))
        ? json(204, {})
        : json(422, { message: "Reference does not exist" });
    }
    return json(404, { message: "Not Found", status: "404" });
  };

  /** GraphQL, only where REST has nothing: the merge queue. */
  const graphql = async (
    req: Request,
    json: (status: number, body: unknown) => Response,
  ): Promise<Response> => {
    const { query, variables } = await req.json() as { query: string; variables: Json };
    if (/enqueuePullRequest/.test(query)) {
      const p = pulls.find((x) => `PR_${x.number}` === variables.id);
      if (!p) return json(200, { errors: [{ message: "Could not resolve to a node" }] });
      if (!options.mergeQueue) {
        return json(200, { errors: [{ message: "Pull request is not in a merge queue state" }] });
      }
      if (variables.sha && variables.sha !== await headSha(p)) {
        return json(200, { errors: [{ message: "Head oid does not match expected head oid" }] });
      }
      if (!queue.includes(p.number)) queue.push(p.number);
      return json(200, {
        data: {
          enqueuePullRequest: {
            mergeQueueEntry: { position: queue.indexOf(p.number) + 1, state: "QUEUED" },
          },
        },
      });
    }
    if (/mergeQueueEntry/.test(query)) {
      const p = pulls.find((x) => x.number === Number(variables.number));
      if (p) await runQueue(p);
      const at = p ? queue.indexOf(p.number) : -1;
      return json(200, {
        data: {
          repository: {
            pullRequest: {
              mergeQueueEntry: at < 0 ? null : { position: at + 1, state: "AWAITING_CHECKS" },
            },
          },
        },
      });
    }
    return json(200, { errors: [{ message: "fake: unsupported query" }] });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const at = Date.now();
    const url = new URL(req.url);
    requests.push(`${req.method} ${url.pathname}`);
    let res: Response;
    if (down) {
      await req.body?.cancel();
      res = Response.json({ message: "Server Error" }, { status: 502 });
    } else {
      try {
        res = await handle(req, url);
      } catch (e) {
        res = Response.json({ message: `fake: ${(e as Error).message}` }, { status: 500 });
      }
    }
    await options.holdAnswer?.(req.method, url.pathname);
    ledger.record(at, req.method, url.pathname, res.status);
    return res;
  });

  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    bare,
    requests,
    log: ledger.log,
    stats: () => ledger.stats(),
    events,
    setWebhook: (target) => hooks.setTarget(target),
    deliveries: hooks.delivered,
    webhooksDelivered: () => hooks.settled(),
    pulls: () =>
      pulls.map((p) => ({
        number: p.number,
        head: p.head,
        state: p.state,
        merged: p.merged,
        title: p.title,
        body: p.body,
      })),
    setCheck,
    setStatus,
    setDown: (d) => down = d,
    headOf: async (n) => await headSha(pulls.find((p) => p.number === n)!),
    async review(n, user, state, body = "") {
      const p = pulls.find((p) => p.number === n)!;
      const r: FakeReview = { id: nextId++, pull: n, user, state, body, commit: await headSha(p) };
      reviews.push(r);
      event({ kind: "review", number: n, sha: r.commit, detail: state });
      hooks.send("pull_request_review", {
        action: "submitted",
        review: {
          id: r.id,
          user: { login: user },
          body,
          state: state.toLowerCase(),
          commit_id: r.commit,
        },
        pull_request: await hookPull(p),
        repository,
      });
    },
    async closeByPerson(n, user, comment) {
      const p = pulls.find((p) => p.number === n)!;
      const list = comments.get(n) ?? [];
      list.push({ user, body: comment });
      comments.set(n, list);
      p.frozenHead = await headSha(p);
      p.state = "closed";
      p.closedBy = user;
      closed(p, "closed");
    },
    refusedPushes: git.refusedPushes,
    pushes: git.pushes,
    async [Symbol.asyncDispose]() {
      hooks.setTarget(undefined);
      await hooks.settled();
      await server.shutdown();
      await git.remove();
    },
  };
}
