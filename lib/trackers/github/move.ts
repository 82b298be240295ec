/**
 * tracker_b's ticket moves (lib/trackers/label_move.ts): read the issue
 * (`GET /repos/{o}/{r}/issues/{n}`) and the repository's labels (`GET /repos/{o}/{r}/labels`),
 * then add the label (`POST …/issues/{n}/labels`), remove the replaced ones
 * (`DELETE …/issues/{n}/labels/{name}`) and close the issue
 * (`PATCH …/issues/{n}` with `state: closed`, `state_reason: completed` — `not_planned` when
 * the task failed for good).
 */
import { type ApiAccess, apiClient, MAX_POLL_PAGES } from "../adapter.ts";
import { HttpApiError } from "../../http/api_error.ts";
import type { HttpClient } from "../../http/client.ts";
import { arr, obj, str } from "../../util/json_fields.ts";
import { planLabelMove } from "../label_move.ts";
import type { MoveResult, TicketMove } from "../move.ts";
import { labelNames, type TicketRef } from "../ticket.ts";

/** The `rel="next"` URL of a GitHub `Link` header. */
export function nextLink(link: string | null): string | undefined {
  for (const part of (link ?? "").split(",")) {
    const m = /<([^>]+)>;\s*rel="next"/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}

/** Every label of the repository (pages followed up to the poll's cap). */
async function repoLabels(http: HttpClient, repoUrl: string, headers: HeadersInit) {
  const out: string[] = [];
  let url: string | undefined = `${repoUrl}/labels?per_page=100`;
  for (let pages = 0; url && pages < MAX_POLL_PAGES; pages++) {
    const answer = await http.request(url, { headers });
    for (const label of arr(answer.json())) out.push(str(obj(label).name));
    url = nextLink(answer.headers.get("link"));
  }
  return out.filter((l) => l !== "");
}

/** Move issue `ids.number` of `access.project` (see the header). */
export async function githubMove(
  access: ApiAccess,
  o: { ids: TicketRef; move: TicketMove; headers: HeadersInit; base: string },
): Promise<MoveResult> {
  const http = apiClient(access, "GitHub");
  const repoUrl = `${o.base}/repos/${access.project}`;
  const number = Number(o.ids.number);
  const issueUrl = `${repoUrl}/issues/${number}`;
  const issue = obj((await http.request(issueUrl, { headers: o.headers })).json());
  const plan = planLabelMove({
    product: "GitHub",
    ref: `${access.project}#${number}`,
    closed: issue.state === "closed",
    labels: labelNames(issue.labels),
    known: /^closed$/i.test(o.move.to.trim()) ? [] : await repoLabels(http, repoUrl, o.headers),
    move: o.move,
  });
  if ("done" in plan) return plan.done;
  if (plan.add !== undefined) {
    await http.request(`${issueUrl}/labels`, {
      method: "POST",
      headers: o.headers,
      json: { labels: [plan.add] },
    });
  }
  for (const label of plan.remove) {
    try {
      await http.request(`${issueUrl}/labels/${encodeURIComponent(label)}`, {
        method: "DELETE",
        headers: o.headers,
      });
    } catch (e) {
      // Someone removed it meanwhile: what the move wanted.
      if (!(e instanceof HttpApiError && e.status === 404)) throw e;
    }
  }
  if (plan.close) {
    await http.request(issueUrl, {
      method: "PATCH",
      headers: o.headers,
      json: {
        state: "closed",
        state_reason: o.move.event === "landed" || o.move.event === "claimed"
          ? "completed"
          : "not_planned",
      },
    });
  }
  return plan.result;
}
