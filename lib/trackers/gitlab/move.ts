/**
 * tracker_c's ticket moves (lib/trackers/label_move.ts): read the issue
 * (`GET /projects/:id/issues/:iid`) and the project's labels (`GET /projects/:id/labels`, group
 * labels included), then write it all in one `PUT /projects/:id/issues/:iid` with `add_labels`,
 * `remove_labels` and `state_event: close`.
 */
import { type ApiAccess, apiClient, MAX_POLL_PAGES } from "../adapter.ts";
import { arr, obj, str } from "../../util/json_fields.ts";
import { planLabelMove } from "../label_move.ts";
import type { MoveResult, TicketMove } from "../move.ts";
import { labelNames, type TicketRef } from "../ticket.ts";

/** Move issue `ids.iid` of `access.project` (see the header). */
export async function gitlabMove(
  access: ApiAccess,
  o: { ids: TicketRef; move: TicketMove; headers: HeadersInit; api: string },
): Promise<MoveResult> {
  const http = apiClient(access, "GitLab");
  const projectUrl = `${o.api}/projects/${encodeURIComponent(access.project)}`;
  const iid = Number(o.ids.iid);
  const issueUrl = `${projectUrl}/issues/${iid}`;
  const issue = obj((await http.request(issueUrl, { headers: o.headers })).json());
  const known: string[] = [];
  if (!/^closed$/i.test(o.move.to.trim())) {
    let page: string | null = "1";
    for (let pages = 0; page && pages < MAX_POLL_PAGES; pages++) {
      const answer = await http.request(
        `${projectUrl}/labels?per_page=100&include_ancestor_groups=true&page=${page}`,
        { headers: o.headers },
      );
      for (const label of arr(answer.json())) known.push(str(obj(label).name));
      page = answer.headers.get("x-next-page") || null;
    }
  }
  const plan = planLabelMove({
    product: "GitLab",
    ref: `${access.project}#${iid}`,
    closed: issue.state === "closed",
    labels: labelNames(issue.labels),
    known: known.filter((l) => l !== ""),
    move: o.move,
  });
  if ("done" in plan) return plan.done;
  await http.request(issueUrl, {
    method: "PUT",
    headers: o.headers,
    json: {
      ...(plan.add !== undefined ? { add_labels: plan.add } : {}),
      ...(plan.remove.length > 0 ? { remove_labels: plan.remove.join(",") } : {}),
      ...(plan.close ? { state_event: "close" } : {}),
    },
  });
  return plan.result;
}
