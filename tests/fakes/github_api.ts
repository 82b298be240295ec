/**
 * A local stand-in for GitHub's REST API v3 (the endpoints pull-request landing calls, shaped as
 * docs.github.com documents them for API version 2022-11-28), backed by a real bare git
 * repository. The bare repository's `pre-receive` hook refuses any push to the protected base
 * branch, so a service that pushes to `main` fails the test; the fake itself moves `main` only
 * when `PUT /repos/{repo}/pulls/{n}/merge` is allowed: the `sha` guard matches the head (else
 * 409 "Head branch was modified"), every required status check is green on the head and enough
 * approving reviews were given (else 405 with GitHub's words), and the merge is clean.
 *
 * Answers carry `ETag` (a repeated GET with `If-None-Match` gets 304) and the rate-limit headers;
 * lists honour `per_page`/`page` with a `Link: rel="next"` header. Tokens are Bearer tokens; a
 * token without `pull_requests` answers 403 with `X-Accepted-GitHub-Permissions`, an unknown one
 * 401 "Bad credentials". Tests play CI and people through {@link FakeGithub}'s methods.
 */
import { hostAnswer } from "./_host_http.ts";
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
   * Awaited when `POST /pulls` arrives, before the pull request is created (a test kills the
   * service meanwhile: GitHub still creates it, and the answer is lost).
   */
  beforeCreate?: () => Promise<void>;
  /** Awaited after a merge through `PUT …/merge`, before GitHub answers (a test kills meanwhile). */
  afterMerge?: () => Promise<void>;
}

/** The fake and its controls. */
export interface FakeGithub extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` (the `api_url`). */
  url: string;
  /** The bare repository (a workspace's `origin`). */
  bare: string;
  /** Every request, as `METHOD path`. */
  requests: string[];
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
  /** The head commit of pull request `n` now. */
  headOf(n: number): Promise<string>;
  /** A reviewer's review. */
  review(n: number, user: string, state: FakeReview["state"], body?: string): Promise<void>;
  /** A person closes pull request `n` unmerged, after a comment. */
  closeByPerson(n: number, user: string, comment: string): void;
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
  const checks = new Map<string, FakeCheck[]>();
  const seen = new Set<string>();
  const requests: string[] = [];
  let down = false;
  /** Pull request numbers in the merge queue, in order. */
  const queue: number[] = [];
  let nextId = 1000;
  const owner = repo.split("/")[0];

  const tip = git.tip;
  const headSha = async (p: FakePull) => p.frozenHead ?? await tip(p.head) ?? "";

  /** The fake CI sees a head for the first time. */
  const runCi = async (sha: string) => {
    if (!sha || seen.has(sha)) return;
    seen.add(sha);
    for (const c of ci(sha, await git.changedFiles(sha))) setCheck(sha, c);
  };
  const setCheck = (sha: string, check: FakeCheck) => {
    const list = (checks.get(sha) ?? []).filter((c) => c.name !== check.name);
    list.push(check);
    checks.set(sha, list);
  };

  const prJson = async (p: FakePull, url: string): Promise<Json> => {
    if (p.state === "open") await runCi(await headSha(p));
    await runQueue(p);
    const sha = await headSha(p);
    const mergeable = p.state === "open" ? await git.mergesCleanly(sha) : null;
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
      mergeable_state: mergeable === false ? "dirty" : "clean",
      labels: p.labels.map((name) => ({ name })),
      head: { ref: p.head, sha, label: `${owner}:${p.head}` },
      base: { ref: p.base, sha: await tip(p.base), label: `${owner}:${p.base}` },
    };
  };

  /** Why `p` at `sha` may not merge (GitHub's words), or undefined. */
  const blocker = async (p: FakePull, sha: string): Promise<string | undefined> => {
    for (const name of required) {
      const c = (checks.get(sha) ?? []).find((c) => c.name === name);
      if (!c || c.status !== "completed" || c.conclusion === "failure") {
        return `Required status check "${name}" is ${
          c?.conclusion === "failure" ? "failing" : "expected"
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
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": "4999",
        "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
        "x-github-api-version-selected": "2022-11-28",
        ...headers,
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
      return json(200, {
        required_status_checks: {
          strict: false,
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
    if ((m = /^\/commits\/([^/]+)\/check-runs$/.exec(rest))) {
      const sha = await git.resolve(m[1]);
      const runs = (checks.get(sha) ?? []).map((c, i) => ({
        id: i + 1,
        name: c.name,
        head_sha: sha,
        status: c.status,
        conclusion: c.status === "completed" ? c.conclusion ?? "success" : null,
        html_url: `https://github.example/${repo}/runs/${i + 1}`,
        output: { title: c.name, summary: c.summary ?? "", text: null },
      }));
      return json(200, { total_count: runs.length, check_runs: runs });
    }
    if ((m = /^\/commits\/([^/]+)\/status$/.exec(rest))) {
      return json(200, { state: "pending", statuses: [], total_count: 0 });
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
      if (!(await tip(head))) {
        return json(422, {
          message: "Validation Failed",
          errors: [{ resource: "PullRequest", field: "head", code: "invalid" }],
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
      return json(201, await prJson(p, url.origin));
    }
    const pull = (n: string) => pulls.find((p) => p.number === Number(n));
    if ((m = /^\/pulls\/(\d+)$/.exec(rest))) {
      const p = pull(m[1]);
      if (!p) return json(404, { message: "Not Found", status: "404" });
      if (req.method === "PATCH" && body.state === "closed" && p.state === "open") {
        p.frozenHead = await headSha(p);
        p.state = "closed";
        p.closedBy = "service-bot";
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
    const url = new URL(req.url);
    requests.push(`${req.method} ${url.pathname}`);
    if (down) {
      await req.body?.cancel();
      return Response.json({ message: "Server Error" }, { status: 502 });
    }
    try {
      return await handle(req, url);
    } catch (e) {
      return Response.json({ message: `fake: ${(e as Error).message}` }, { status: 500 });
    }
  });

  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    bare,
    requests,
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
    setDown: (d) => down = d,
    headOf: async (n) => await headSha(pulls.find((p) => p.number === n)!),
    async review(n, user, state, body = "") {
      const p = pulls.find((p) => p.number === n)!;
      reviews.push({ id: nextId++, pull: n, user, state, body, commit: await headSha(p) });
    },
    closeByPerson(n, user, comment) {
      const p = pulls.find((p) => p.number === n)!;
      const list = comments.get(n) ?? [];
      list.push({ user, body: comment });
      comments.set(n, list);
      headSha(p).then((sha) => p.frozenHead = sha);
      p.state = "closed";
      p.closedBy = user;
    },
    refusedPushes: git.refusedPushes,
    pushes: git.pushes,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await git.remove();
    },
  };
}
