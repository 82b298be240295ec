/**
 * tracker_c's webhooks, as GitLab sends them: the issue hook (`object_kind: "issue"`)
 * authenticated by the shared token in `X-Gitlab-Token` (compared in constant time), named by
 * `Idempotency-Key` or `X-Gitlab-Event-UUID`. The hook's issue attributes differ from the REST
 * issue that polling reads (adapter.ts beside this file).
 */
import { arr, isoTime, labelNames, obj, str, type Ticket } from "../ticket.ts";
import type { HandlerContext, HostEvent, WebhookHandler } from "../../webhooks/handler.ts";

function tickets(payload: unknown, _headers: Headers, context: HandlerContext): Ticket[] {
  const p = obj(payload);
  if (p.object_kind !== "issue") return [];
  const attrs = obj(p.object_attributes);
  const project = obj(p.project);
  const path = str(project.path_with_namespace);
  if (!path || attrs.iid === undefined) return [];
  const iid = Number(attrs.iid);
  const ref = `${path}#${iid}`;
  const closed = attrs.action === "close" ||
    (attrs.state !== "opened" && attrs.action !== "reopen");
  return [{
    tracker: context.tracker,
    key: ref,
    ref,
    title: str(attrs.title),
    body: str(attrs.description),
    labels: labelNames(arr(p.labels).length ? p.labels : attrs.labels),
    state: closed ? "closed" : "open",
    url: str(attrs.url),
    raw: {
      updated_at: isoTime(attrs.updated_at),
      ids: { project_id: Number(project.id ?? attrs.project_id), iid },
    },
  }];
}

/** The merge request and pipeline hooks wake the pull-request landing (lib/landing). */
function hostEvent(payload: unknown): HostEvent | undefined {
  const p = obj(payload);
  if (p.object_kind !== "merge_request" && p.object_kind !== "pipeline") return undefined;
  const project = obj(p.project);
  const repo = str(project.path_with_namespace);
  return repo ? { provider: "gitlab", repo, project_id: Number(project.id ?? 0) } : undefined;
}

/** GitLab's webhooks as tracker_c. */
export const gitlabHandler: WebhookHandler<Ticket> = {
  scheme: "token",
  signatureHeaders: ["X-Tracker-C-Token", "X-Gitlab-Token"],
  hostEvent,
  deliveryHeaders: ["X-Tracker-C-Event-UUID", "Idempotency-Key", "X-Gitlab-Event-UUID"],
  tickets,
};
