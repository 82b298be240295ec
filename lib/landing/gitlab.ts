/**
 * GitLab (gitlab.com or self-managed) as a {@link PullRequestHost}, through REST v4. A merge
 * request's requirements come from the project (`only_allow_merge_if_pipeline_succeeds` makes its
 * pipeline a required check, `merge_trains_enabled` sends merges through the merge train) and
 * from its approval rules, which GitLab counts itself (`approvals_left`). A reviewer's "request
 * changes" is read from the merge request's reviewers.
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

/** Where and as whom GitLab is called. */
export interface GitlabAccess extends HostDeps {
  /** `https://gitlab.com/api/v4` or `https://HOST/api/v4`. */
  apiUrl: string;
  /** The project path (`group/name`) or numeric id. */
  repo: string;
  /** The token, read at each call (never stored, logged or journaled). */
  token: () => string;
}

/** The check a required pipeline is shown as. */
const PIPELINE = "pipeline";

const PIPELINE_STATE: Record<string, Check["state"]> = {
  success: "success",
  skipped: "success",
  failed: "failure",
  canceled: "failure",
};

/** Merge methods under which a merge request must hold the target's tip (`need_rebase`). */
const UP_TO_DATE_METHODS = new Set(["ff", "rebase_merge"]);

/** Merge statuses that mean GitLab is still working it out. */
const CHECKING = new Set(["checking", "unchecked", "preparing", "approvals_syncing"]);

function toPr(json: unknown): PullRequest {
  const m = obj(json);
  const state = str(m.state);
  const status = str(m.detailed_merge_status);
  const merged = state === "merged";
  const commit = str(m.merge_commit_sha) || str(m.squash_commit_sha) || (merged ? str(m.sha) : "");
  return {
    number: Number(m.iid),
    url: str(m.web_url),
    state: merged ? "merged" : state === "opened" ? "open" : "closed",
    headBranch: str(m.source_branch),
    headSha: str(m.sha),
    baseBranch: str(m.target_branch),
    draft: m.draft === true || m.work_in_progress === true,
    mergeable: m.has_conflicts === true || status === "conflict"
      ? false
      : CHECKING.has(status)
      ? null
      : true,
    ...(commit ? { mergeCommit: commit } : {}),
  };
}

/** GitLab as a merge-request host. */
export class GitlabHost implements PullRequestHost {
  readonly product = "GitLab";
  readonly noun = "merge request";
  readonly #a: GitlabAccess;
  readonly #api: HostApi;
  /** `/projects/<url-encoded path or id>`. */
  readonly #project: string;

  constructor(access: GitlabAccess) {
    this.#a = access;
    this.#project = `/projects/${encodeURIComponent(access.repo)}`;
    this.#api = new HostApi(access.apiUrl, () => this.#headers(), access, "GitLab");
  }

  #headers(): Record<string, string> {
    const token = this.#a.token();
    return token ? { "private-token": token } : {};
  }

  #mr(iid: number, path = ""): string {
    return `${this.#project}/merge_requests/${iid}${path}`;
  }

  /** `!12`. */
  ref(number: number): string {
    return `!${number}`;
  }

  async requirements(_base: string): Promise<Requirements> {
    const p = obj((await this.#api.get(this.#project)).json);
    return {
      checks: p.only_allow_merge_if_pipeline_succeeds === true ? [PIPELINE] : [],
      // Approval rules are counted by GitLab per merge request (`approvals_left`).
      approvals: 0,
      dismissStale: false,
      queue: p.merge_trains_enabled === true,
      // Fast-forward and semi-linear merges need the merge request rebased onto the target.
      upToDate: UP_TO_DATE_METHODS.has(str(p.merge_method)),
      ...(UP_TO_DATE_METHODS.has(str(p.merge_method))
        ? { upToDateSource: `GitLab's ${str(p.merge_method)} merge method` }
        : {}),
      sources: ["project settings", "approval rules"],
      unread: [],
    };
  }

  async findByHead(branch: string): Promise<PullRequest | undefined> {
    const query = new URLSearchParams({
      source_branch: branch,
      state: "all",
      order_by: "created_at",
      sort: "desc",
      per_page: "100",
    });
    const found = (await this.#api.getAll(`${this.#project}/merge_requests?${query}`)).map(toPr)
      .filter((p) => p.headBranch === branch)
      .sort((a, b) => b.number - a.number);
    return found[0];
  }

  async open(r: OpenRequest): Promise<PullRequest> {
    try {
      return toPr(
        (await this.#api.send("POST", `${this.#project}/merge_requests`, {
          source_branch: r.branch,
          target_branch: r.base,
          title: r.draft ? `Draft: ${r.title}` : r.title,
          description: r.body,
          labels: r.labels.join(","),
          remove_source_branch: r.deleteBranch,
          squash: r.squash,
        })).json,
      );
    } catch (e) {
      // Opened by an earlier process that died before recording it: that one is ours.
      if (e instanceof HttpApiError && e.status === 409) {
        const found = await this.findByHead(r.branch);
        if (found?.state === "open") return found;
      }
      throw e;
    }
  }

  async snapshot(number: number, req: Requirements): Promise<Snapshot> {
    // The merge request, its approvals and its reviewers are asked for side by side: one round
    // trip, not three (the two lists mean something only while it is open).
    const [answer, approvalsAnswer, reviewers, car] = await Promise.all([
      this.#api.get(this.#mr(number)),
      this.#api.get(this.#mr(number, "/approvals")),
      this.#api.getAll(this.#mr(number, "/reviewers")),
      req.queue ? this.#trainCar(number) : undefined,
    ]);
    const raw = obj(answer.json);
    const pr = toPr(raw);
    const snapshot: Snapshot = { pr, checks: [], reviews: [] };
    if (pr.state === "open") {
      const pipeline = obj(raw.head_pipeline);
      if (Object.keys(pipeline).length > 0 && str(pipeline.sha) === pr.headSha) {
        const state = PIPELINE_STATE[str(pipeline.status)] ?? "pending";
        snapshot.checks.push({
          name: PIPELINE,
          state,
          summary: state === "failure"
            ? await this.#failedJobs(Number(pipeline.id))
            : `pipeline ${str(pipeline.status)}`,
          ...(str(pipeline.web_url) ? { url: str(pipeline.web_url) } : {}),
          required: req.checks.includes(PIPELINE),
          ...(Number(pipeline.id) > 0
            ? { rerun: { kind: "pipeline" as const, id: Number(pipeline.id) } }
            : {}),
          ...(str(pipeline.finished_at) ? { completedAt: str(pipeline.finished_at) } : {}),
        });
      }
      const approvals = obj(approvalsAnswer.json);
      snapshot.approvalsLeft = Number(approvals.approvals_left ?? 0);
      const reviews = new Map<string, Review>();
      for (const a of arr(approvals.approved_by).map(obj)) {
        const user = str(obj(a.user).username);
        if (user) reviews.set(user, { id: user, user, state: "approved", body: "" });
      }
      for (const r of reviewers.map(obj)) {
        const user = str(obj(r.user).username);
        if (user && r.state === "requested_changes") {
          reviews.set(user, { id: user, user, state: "changes_requested", body: "" });
        }
      }
      snapshot.reviews = [...reviews.values()];
      if (car && str(car.status) && str(car.status) !== "merged") {
        snapshot.queue = { state: str(car.status) };
      }
    } else if (pr.state === "closed") {
      const by = str(obj(raw.closed_by).username);
      if (by) {
        snapshot.closedBy = by;
        const notes =
          (await this.#api.getAll(this.#mr(number, "/notes?sort=desc&order_by=created_at")))
            .map(obj);
        const last = notes.find((n) => n.system !== true && str(obj(n.author).username) === by);
        if (last) snapshot.closeComment = str(last.body).slice(0, 2000);
      }
    }
    return snapshot;
  }

  async baseTip(base: string): Promise<string> {
    const branch = obj(
      (await this.#api.get(`${this.#project}/repository/branches/${encodeURIComponent(base)}`))
        .json,
    );
    return str(obj(branch.commit).id);
  }

  /** The merge request's car on the merge train, or undefined when it is not on it. */
  async #trainCar(number: number): Promise<Record<string, unknown> | undefined> {
    try {
      return obj(
        (await this.#api.get(`${this.#project}/merge_trains/merge_requests/${number}`)).json,
      );
    } catch (e) {
      if (!(e instanceof HttpApiError) || e.status !== 404) throw e;
      return undefined; // not on the train
    }
  }

  /** `job \`test\` (stage test) failed: script_failure <url>` for each failed job. */
  async #failedJobs(pipelineId: number): Promise<string> {
    const jobs = (await this.#api.getAll(
      `${this.#project}/pipelines/${pipelineId}/jobs?scope[]=failed&per_page=100`,
    )).map(obj).filter((j) => j.allow_failure !== true);
    if (jobs.length === 0) return "the pipeline failed";
    return jobs.map((j) =>
      `job \`${str(j.name)}\` (stage ${str(j.stage)}) failed: ${str(j.failure_reason) || "failed"}${
        str(j.web_url) ? ` ${str(j.web_url)}` : ""
      }`
    ).join("\n");
  }

  async merge(
    pr: PullRequest,
    sha: string,
    method: "merge" | "squash" | "rebase",
  ): Promise<MergeAnswer> {
    try {
      const mr = toPr(
        (await this.#api.send("PUT", this.#mr(pr.number, "/merge"), {
          sha,
          squash: method === "squash",
        })).json,
      );
      return mr.state === "merged"
        ? { merged: true, commit: mr.mergeCommit ?? sha }
        : { merged: false, reason: "GitLab did not merge it yet", status: 202 };
    } catch (e) {
      if (!(e instanceof HttpApiError) || ![405, 406, 409, 422].includes(e.status)) throw e;
      return { merged: false, reason: e.apiMessage || e.message, status: e.status };
    }
  }

  async enqueue(
    pr: PullRequest,
    sha: string,
    method: "merge" | "squash" | "rebase",
  ): Promise<void> {
    await this.#api.send("POST", `${this.#project}/merge_trains/merge_requests/${pr.number}`, {
      sha,
      squash: method === "squash",
      when_pipeline_succeeds: true,
    });
  }

  async rerun(check: Check): Promise<void> {
    if (check.rerun?.kind !== "pipeline") {
      throw new HttpApiError(`${check.name} cannot be re-run through the API`, { status: 422 });
    }
    // Retries the pipeline's failed and canceled jobs on the same commit.
    await this.#api.send("POST", `${this.#project}/pipelines/${check.rerun.id}/retry`, {});
  }

  async close(pr: PullRequest, comment: string): Promise<void> {
    await this.#api.send("POST", this.#mr(pr.number, "/notes"), { body: comment });
    await this.#api.send("PUT", this.#mr(pr.number), { state_event: "close" });
  }

  async reviewComments(pr: PullRequest, reviews: Review[]): Promise<string> {
    const who = new Set(reviews.map((r) => r.user));
    const notes = (await this.#api.getAll(this.#mr(pr.number, "/notes?sort=asc&per_page=100")))
      .map(obj).filter((n) => n.system !== true && who.has(str(obj(n.author).username)));
    const parts = reviews.map((r) => `${r.user} requested changes.`);
    for (const n of notes) {
      const at = obj(n.position);
      const where = str(at.new_path)
        ? `${str(at.new_path)}${at.new_line ? `:${at.new_line}` : ""}: `
        : "";
      parts.push(`- ${str(obj(n.author).username)}: ${where}${str(n.body)}`);
    }
    return parts.join("\n");
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.#api.send(
        "DELETE",
        `${this.#project}/repository/branches/${encodeURIComponent(branch)}`,
      );
    } catch (e) {
      if (!(e instanceof HttpApiError) || e.status !== 404) throw e; // removed on merge already
    }
  }

  async preflight(_base: string): Promise<HostProblem[]> {
    const project = this.#a.repo;
    if (!this.#a.token()) return [];
    let p: Record<string, unknown>;
    try {
      p = obj((await this.#api.get(this.#project)).json);
    } catch (e) {
      if (!(e instanceof HttpApiError)) throw e;
      if (e.status === 401) {
        return [{
          problem:
            `GitLab refused the token (HTTP 401 ${e.apiMessage}): it is wrong, revoked or expired`,
          fix: "create a new project access token (role Developer, scope api) and export it " +
            "(docs/landing.md)",
        }];
      }
      if (e.status === 404 || e.status === 403) {
        return [{
          problem: `the token cannot see project ${project} (HTTP ${e.status} ${e.apiMessage})`,
          fix: "check landing.repo (group/name or the numeric id) and that the token belongs " +
            "to that project",
        }];
      }
      throw e;
    }
    const problems: HostProblem[] = [];
    const perms = obj(p.permissions);
    const level = Math.max(
      Number(obj(perms.project_access).access_level ?? 0),
      Number(obj(perms.group_access).access_level ?? 0),
    );
    if (level < 30) {
      problems.push({
        problem: `the token's role in ${project} cannot push or open merge requests ` +
          `(access level ${level}; Developer is 30)`,
        fix: "give the project access token the Developer role (or Maintainer)",
      });
    }
    try {
      const self = obj((await this.#api.get("/personal_access_tokens/self")).json);
      const scopes = arr(self.scopes).map(str);
      if (scopes.length > 0 && !scopes.includes("api")) {
        problems.push({
          problem: `the token's scopes are ${scopes.join(", ")}: without api it cannot open or ` +
            "merge merge requests",
          fix: "create the token with the api scope",
        });
      }
    } catch (e) {
      if (!(e instanceof HttpApiError) || ![401, 403, 404].includes(e.status)) throw e;
    }
    return problems;
  }
}
