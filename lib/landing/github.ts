/**
 * GitHub (and GitHub Enterprise Server) as a {@link PullRequestHost}, through REST v3
 * (`application/vnd.github+json`, API version 2022-11-28). GraphQL is used only where REST has
 * nothing: adding a pull request to a merge queue (`enqueuePullRequest`) and reading its place in
 * the queue. What the base requires is read from both places GitHub keeps it: rulesets (`GET
 * /repos/{repo}/rules/branches/{branch}`, readable with read access) and classic branch
 * protection (`GET …/branches/{branch}/protection`, which needs Administration: Read; without it
 * the required checks come from `GET …/branches/{branch}` and the required reviews are left to
 * GitHub's answer to the merge).
 */
import { HttpApiError } from "../http/api_error.ts";
import { HostApi, type HostDeps } from "./api.ts";
import type {
  Check,
  HostProblem,
  MergeAnswer,
  OpenRequest,
  PullRequest,
  PullRequestHost,
  Requirements,
  Review,
  Snapshot,
} from "./host.ts";
import { arr, obj, str } from "../util/json_fields.ts";

/** Where and as whom GitHub is called. */
export interface GithubAccess extends HostDeps {
  /** `https://api.github.com` or `https://HOST/api/v3`. */
  apiUrl: string;
  /** `owner/name`. */
  repo: string;
  /** The token, read at each call (never stored, logged or journaled). */
  token: () => string;
}

/** The GraphQL endpoint beside a REST base URL (GitHub Enterprise: `/api/v3` → `/api/graphql`). */
function graphqlUrl(apiUrl: string): string {
  const base = apiUrl.replace(/\/+$/, "");
  return /\/api\/v3$/.test(base) ? base.replace(/\/v3$/, "/graphql") : `${base}/graphql`;
}

function toPr(json: unknown): PullRequest {
  const p = obj(json);
  const merged = p.merged === true || (p.merged_at !== null && p.merged_at !== undefined);
  return {
    number: Number(p.number),
    url: str(p.html_url),
    state: merged ? "merged" : p.state === "open" ? "open" : "closed",
    headBranch: str(obj(p.head).ref),
    headSha: str(obj(p.head).sha),
    baseBranch: str(obj(p.base).ref),
    draft: p.draft === true,
    mergeable: typeof p.mergeable === "boolean" ? p.mergeable : null,
    ...(str(p.merge_commit_sha) && merged ? { mergeCommit: str(p.merge_commit_sha) } : {}),
    ...(str(p.node_id) ? { nodeId: str(p.node_id) } : {}),
  };
}

const CHECK_RUN_STATE: Record<string, Check["state"]> = {
  success: "success",
  neutral: "success",
  skipped: "success",
};

const STATUS_STATE: Record<string, Check["state"]> = {
  success: "success",
  pending: "pending",
  failure: "failure",
  error: "failure",
};

const REVIEW_STATE: Record<string, Review["state"]> = {
  APPROVED: "approved",
  CHANGES_REQUESTED: "changes_requested",
  COMMENTED: "commented",
  DISMISSED: "dismissed",
};

/** GitHub as a pull-request host. */
export class GithubHost implements PullRequestHost {
  readonly product = "GitHub";
  readonly noun = "pull request";
  readonly #a: GithubAccess;
  readonly #api: HostApi;

  constructor(access: GithubAccess) {
    this.#a = access;
    this.#api = new HostApi(access.apiUrl, () => this.#headers(), access, "GitHub");
  }

  #headers(): Record<string, string> {
    const token = this.#a.token();
    return {
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      "user-agent": "service-landing",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    };
  }

  #repo(path = ""): string {
    return `/repos/${this.#a.repo}${path}`;
  }

  /** `#12`. */
  ref(number: number): string {
    return `#${number}`;
  }

  async requirements(base: string): Promise<Requirements> {
    const req: Requirements = {
      checks: [],
      approvals: 0,
      dismissStale: false,
      queue: false,
      upToDate: false,
      sources: [],
      unread: [],
    };
    const checks = new Set<string>();
    const branch = encodeURIComponent(base);
    try {
      const rules = await this.#api.getAll(this.#repo(`/rules/branches/${branch}`));
      for (const rule of rules.map(obj)) {
        const p = obj(rule.parameters);
        if (rule.type === "pull_request") {
          req.approvals = Math.max(req.approvals, Number(p.required_approving_review_count ?? 0));
          req.dismissStale ||= p.dismiss_stale_reviews_on_push === true;
        } else if (rule.type === "required_status_checks") {
          for (const c of arr(p.required_status_checks)) checks.add(str(obj(c).context));
          if (p.strict_required_status_checks_policy === true) {
            req.upToDate = true;
            req.upToDateSource ??= "the ruleset";
          }
        } else if (rule.type === "merge_queue") {
          req.queue = true;
        }
      }
      if (rules.length > 0) req.sources.push("rulesets");
    } catch (e) {
      if (!(e instanceof HttpApiError) || e.status !== 404) throw e; // an old GHES: no rulesets
    }
    try {
      const p = obj((await this.#api.get(this.#repo(`/branches/${branch}/protection`))).json);
      const sc = obj(p.required_status_checks);
      for (const c of arr(sc.contexts)) checks.add(str(c));
      for (const c of arr(sc.checks)) checks.add(str(obj(c).context));
      if (sc.strict === true) {
        req.upToDate = true;
        req.upToDateSource ??= "the branch protection";
      }
      const reviews = obj(p.required_pull_request_reviews);
      req.approvals = Math.max(req.approvals, Number(reviews.required_approving_review_count ?? 0));
      req.dismissStale ||= reviews.dismiss_stale_reviews === true;
      req.sources.push("branch protection");
    } catch (e) {
      if (!(e instanceof HttpApiError)) throw e;
      if (e.status === 403) {
        // Reading protection needs Administration: Read; the branch itself says which checks.
        const b = obj((await this.#api.get(this.#repo(`/branches/${branch}`))).json);
        const sc = obj(obj(b.protection).required_status_checks);
        for (const c of arr(sc.contexts)) checks.add(str(c));
        for (const c of arr(sc.checks)) checks.add(str(obj(c).context));
        if (b.protected === true) {
          req.sources.push("branch (required checks)");
          req.unread.push(
            "the required reviews of the branch protection and whether it requires branches to " +
              "be up to date (the token lacks Administration: Read; GitHub's answer to the " +
              "merge decides them)",
          );
        }
      } else if (e.status !== 404) throw e; // 404: "Branch not protected"
    }
    checks.delete("");
    req.checks = [...checks].sort();
    return req;
  }

  async findByHead(branch: string): Promise<PullRequest | undefined> {
    const owner = this.#a.repo.split("/")[0];
    const query = new URLSearchParams({
      head: `${owner}:${branch}`,
      state: "all",
      per_page: "100",
    });
    const found = (await this.#api.getAll(this.#repo(`/pulls?${query}`))).map(toPr)
      .filter((p) => p.headBranch === branch)
      .sort((a, b) => b.number - a.number);
    return found[0];
  }

  async open(r: OpenRequest): Promise<PullRequest> {
    let pr: PullRequest;
    try {
      pr = toPr(
        (await this.#api.send("POST", this.#repo("/pulls"), {
          title: r.title,
          head: r.branch,
          base: r.base,
          body: r.body,
          draft: r.draft,
          maintainer_can_modify: false,
        })).json,
      );
    } catch (e) {
      // Opened by an earlier process that died before recording it: that one is ours.
      if (e instanceof HttpApiError && e.status === 422 && /already exists/i.test(e.apiMessage)) {
        const found = await this.findByHead(r.branch);
        if (found?.state === "open") return found;
      }
      throw e;
    }
    if (r.labels.length > 0) {
      await this.#api.send("POST", this.#repo(`/issues/${pr.number}/labels`), { labels: r.labels });
    }
    return pr;
  }

  async snapshot(number: number, req: Requirements, head?: string): Promise<Snapshot> {
    // The pull request, its reviews and (when the pushed head is known) that head's checks are
    // asked for side by side: one round trip, not four.
    const [answer, reviews, early, queue] = await Promise.all([
      this.#api.get(this.#repo(`/pulls/${number}`)),
      this.#reviews(number),
      head ? this.#checks(head, req) : undefined,
      req.queue ? this.#queueEntry(number) : undefined,
    ]);
    const pr = toPr(answer.json);
    const snapshot: Snapshot = { pr, checks: [], reviews };
    if (pr.state === "open") {
      snapshot.checks = early && pr.headSha === head ? early : await this.#checks(pr.headSha, req);
      if (queue) snapshot.queue = queue;
    } else if (pr.state === "closed") {
      const issue = obj((await this.#api.get(this.#repo(`/issues/${number}`))).json);
      const by = str(obj(issue.closed_by).login);
      if (by) {
        snapshot.closedBy = by;
        const comments = await this.#api.getAll(
          this.#repo(`/issues/${number}/comments?per_page=100`),
        );
        const last = comments.map(obj).filter((c) => str(obj(c.user).login) === by).at(-1);
        if (last) snapshot.closeComment = str(last.body).slice(0, 2000);
      }
    }
    return snapshot;
  }

  async baseTip(base: string): Promise<string> {
    const ref = base.split("/").map(encodeURIComponent).join("/");
    const answer = obj((await this.#api.get(this.#repo(`/git/ref/heads/${ref}`))).json);
    return str(obj(answer.object).sha);
  }

  /** Check runs and commit statuses of `sha`, the latest of each name. */
  async #checks(sha: string, req: Requirements): Promise<Check[]> {
    const byName = new Map<string, Check>();
    const [runsAnswer, statusAnswer] = await Promise.all([
      this.#api.get(this.#repo(`/commits/${sha}/check-runs?per_page=100`)),
      this.#api.get(this.#repo(`/commits/${sha}/status?per_page=100`)),
    ]);
    const runs = obj(runsAnswer.json);
    // Newest first: a re-run replaces an earlier run of the same name.
    const sorted = arr(runs.check_runs).map(obj).sort((a, b) => Number(b.id) - Number(a.id));
    for (const run of sorted) {
      const name = str(run.name);
      if (!name || byName.has(name)) continue;
      const out = obj(run.output);
      const state: Check["state"] = run.status !== "completed"
        ? "pending"
        : CHECK_RUN_STATE[str(run.conclusion)] ?? "failure";
      const id = Number(run.id);
      byName.set(name, {
        name,
        state,
        summary: [str(out.title), str(out.summary), str(out.text)].filter(Boolean).join("\n")
          .slice(0, 4000) || `${name} ${str(run.conclusion) || str(run.status)}`,
        ...(str(run.html_url) ? { url: str(run.html_url) } : {}),
        required: req.checks.includes(name),
        // An Actions job is re-run through the Actions API (its check run's id is the job's).
        ...(Number.isSafeInteger(id) && id > 0
          ? {
            rerun: {
              kind: str(obj(run.app).slug) === "github-actions" ? "actions_job" : "check_run",
              id,
            },
          }
          : {}),
        ...(str(run.completed_at) ? { completedAt: str(run.completed_at) } : {}),
      });
    }
    const combined = obj(statusAnswer.json);
    for (const s of arr(combined.statuses).map(obj)) {
      const name = str(s.context);
      if (!name || byName.has(name)) continue; // the combined status lists the latest per context
      byName.set(name, {
        name,
        state: STATUS_STATE[str(s.state)] ?? "pending",
        summary: str(s.description) || `${name} ${str(s.state)}`,
        ...(str(s.target_url) ? { url: str(s.target_url) } : {}),
        required: req.checks.includes(name),
      });
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Each reviewer's latest review that is not a mere comment (GitHub's own rule), else a comment. */
  async #reviews(number: number): Promise<Review[]> {
    const all = (await this.#api.getAll(this.#repo(`/pulls/${number}/reviews?per_page=100`)))
      .map(obj);
    const latest = new Map<string, Review>();
    for (const r of all) {
      const state = REVIEW_STATE[str(r.state)];
      const user = str(obj(r.user).login);
      if (!state || !user) continue;
      const prior = latest.get(user);
      if (state === "commented" && prior && prior.state !== "commented") continue;
      latest.set(user, {
        id: str(r.id),
        user,
        state,
        body: str(r.body),
        ...(str(r.commit_id) ? { commitId: str(r.commit_id) } : {}),
      });
    }
    return [...latest.values()];
  }

  async #graphql(
    query: string,
    variables: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const answer = obj(
      (await this.#api.send("POST", graphqlUrl(this.#a.apiUrl), {
        query,
        variables,
      })).json,
    );
    const errors = arr(answer.errors).map((e) => str(obj(e).message)).filter(Boolean);
    if (errors.length > 0) {
      throw new HttpApiError(`GitHub GraphQL: ${errors.join("; ")}`, {
        status: 422,
        method: "POST",
        url: graphqlUrl(this.#a.apiUrl),
        apiMessage: errors.join("; "),
      });
    }
    return obj(answer.data);
  }

  async #queueEntry(number: number): Promise<Snapshot["queue"]> {
    const [owner, name] = this.#a.repo.split("/");
    const data = await this.#graphql(
      `query($owner: String!, $name: String!, $number: Int!) {
        repository(owner: $owner, name: $name) {
          pullRequest(number: $number) { mergeQueueEntry { position state } }
        }
      }`,
      { owner, name, number },
    );
    const entry = obj(obj(obj(data.repository).pullRequest).mergeQueueEntry);
    if (Object.keys(entry).length === 0) return undefined;
    return {
      state: str(entry.state),
      ...(typeof entry.position === "number" ? { position: entry.position } : {}),
    };
  }

  async merge(
    pr: PullRequest,
    sha: string,
    method: "merge" | "squash" | "rebase",
  ): Promise<MergeAnswer> {
    try {
      const answer = obj(
        (await this.#api.send("PUT", this.#repo(`/pulls/${pr.number}/merge`), {
          sha,
          merge_method: method,
        })).json,
      );
      return { merged: true, commit: str(answer.sha) };
    } catch (e) {
      if (!(e instanceof HttpApiError) || (e.status !== 405 && e.status !== 409)) throw e;
      return {
        merged: false,
        reason: e.apiMessage || e.message,
        status: e.status,
        ...(/merge queue/i.test(e.apiMessage) ? { queue: true } : {}),
        ...(/not up to date/i.test(e.apiMessage) ? { behind: true } : {}),
      };
    }
  }

  async enqueue(pr: PullRequest, sha: string): Promise<void> {
    const id = pr.nodeId ?? str(
      obj((await this.#api.get(this.#repo(`/pulls/${pr.number}`))).json)
        .node_id,
    );
    await this.#graphql(
      `mutation($id: ID!, $sha: GitObjectID) {
        enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $sha }) {
          mergeQueueEntry { position state }
        }
      }`,
      { id, sha },
    );
  }

  async rerun(check: Check): Promise<void> {
    const r = check.rerun;
    if (!r || r.kind === "pipeline") {
      throw new HttpApiError(`${check.name} cannot be re-run through the API`, { status: 422 });
    }
    await this.#api.send(
      "POST",
      this.#repo(
        r.kind === "actions_job" ? `/actions/jobs/${r.id}/rerun` : `/check-runs/${r.id}/rerequest`,
      ),
      {},
    );
  }

  async close(pr: PullRequest, comment: string): Promise<void> {
    await this.#api.send("POST", this.#repo(`/issues/${pr.number}/comments`), { body: comment });
    await this.#api.send("PATCH", this.#repo(`/pulls/${pr.number}`), { state: "closed" });
  }

  async reviewComments(pr: PullRequest, reviews: Review[]): Promise<string> {
    const parts: string[] = [];
    for (const r of reviews) {
      parts.push(`${r.user} requested changes${r.body ? `:\n${r.body}` : "."}`);
      const inline = await this.#api.getAll(
        this.#repo(`/pulls/${pr.number}/reviews/${r.id}/comments?per_page=100`),
      );
      for (const c of inline.map(obj)) {
        const line = c.line ?? c.original_line;
        parts.push(`- ${str(c.path)}${line ? `:${line}` : ""}: ${str(c.body)}`);
      }
    }
    return parts.join("\n");
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.#api.send("DELETE", this.#repo(`/git/refs/heads/${branch}`));
    } catch (e) {
      // Gone already (GitHub's "automatically delete head branches"): nothing to do.
      if (!(e instanceof HttpApiError) || (e.status !== 404 && e.status !== 422)) throw e;
    }
  }

  async preflight(base: string): Promise<HostProblem[]> {
    const repo = this.#a.repo;
    if (!this.#a.token()) return []; // the caller names the unset variable
    let r;
    try {
      r = await this.#api.get(this.#repo());
    } catch (e) {
      if (!(e instanceof HttpApiError)) throw e;
      if (e.status === 401) {
        return [{
          problem: `GitHub refused the token (HTTP 401 ${e.apiMessage}): it is wrong or expired`,
          fix: "create a new fine-grained token for the repository and export it (docs/landing.md)",
        }];
      }
      if (e.status === 404 || e.status === 403) {
        return [{
          problem: `the token cannot see ${repo} (HTTP ${e.status}${
            e.apiMessage ? ` ${e.apiMessage}` : ""
          })`,
          fix: `check landing.repo, and give the token access to ${repo} ` +
            "(fine-grained token: Repository access → Only select repositories)",
        }];
      }
      throw e;
    }
    const problems: HostProblem[] = [];
    const scopes = r.headers.get("x-oauth-scopes");
    if (scopes !== null && !/\b(repo|public_repo)\b/.test(scopes)) {
      problems.push({
        problem: `the classic token has the scopes "${scopes}", without repo`,
        fix: "give it the repo scope, or use a fine-grained token (docs/landing.md)",
      });
    }
    const permissions = obj(obj(r.json).permissions);
    if (permissions.push === false) {
      problems.push({
        problem:
          `the token cannot push to ${repo}: it lacks the Contents: Read and write permission`,
        fix: "give the fine-grained token Contents: Read and write (and Pull requests: Read and " +
          "write), or a role with write access",
      });
    }
    // Reads every landing makes: each names the permission GitHub says it needs.
    const probes: [string, string][] = [
      [this.#repo("/pulls?per_page=1"), "Pull requests: Read and write"],
      [this.#repo(`/commits/${encodeURIComponent(base)}/check-runs?per_page=1`), "Checks: Read"],
      [this.#repo(`/commits/${encodeURIComponent(base)}/status`), "Commit statuses: Read"],
    ];
    for (const [path, permission] of probes) {
      try {
        await this.#api.get(path);
      } catch (e) {
        if (!(e instanceof HttpApiError) || (e.status !== 403 && e.status !== 401)) throw e;
        problems.push({
          problem: `the token lacks ${permission}${
            e.hint ? ` (GitHub: ${e.hint})` : ""
          }: HTTP ${e.status} ${e.apiMessage}`,
          fix: `give the fine-grained token ${permission} on ${repo}`,
        });
      }
    }
    return problems;
  }
}
