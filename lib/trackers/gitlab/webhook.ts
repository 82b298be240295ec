/**
 * tracker_c's webhooks, as GitLab sends them: the issue hook (`object_kind: "issue"`)
 * authenticated by the shared token in `X-Gitlab-Token` (compared in constant time), named by
 * `Idempotency-Key` or `X-Gitlab-Event-UUID`. The hook's issue attributes differ from the REST
 * issue that polling reads (adapter.ts beside this file).
 */
import { arr, obj, str } from "../../util/json_fields.ts";
import { isoTime, type Ticket, ticketLabels } from "../ticket.ts";
import {
  type HandlerContext,
  type HostEvent,
  type HostEventKeys,
  hostEventKeys,
  type WebhookHandler,
} from "../../webhooks/handler.ts";

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
    ...ticketLabels(arr(p.labels).length ? p.labels : attrs.labels ?? p.labels),
    state: closed ? "closed" : "open",
    url: str(attrs.url),
    raw: {
      updated_at: isoTime(attrs.updated_at),
      ids: { project_id: Number(project.id ?? attrs.project_id), iid },
    },
  }];
}

/** A merge request pipeline's ref: `refs/merge-requests/<iid>/head` (or `/merge`, `/train`). */
const MR_REF = /^refs\/merge-requests\/(\d+)\/(head|merge|train)$/;

/** Which merge requests a hook concerns (a pipeline names its SHA, its ref or merge request). */
function mergeRequestKeys(p: Record<string, unknown>): HostEventKeys {
  const attrs = obj(p.object_attributes);
  if (p.object_kind === "merge_request") {
    return {
      numbers: [attrs.iid],
      shas: [obj(attrs.last_commit).id],
      branches: [attrs.source_branch],
      mergedInto: attrs.action === "merge" ? attrs.target_branch : undefined,
    };
  }
  const ref = str(attrs.ref);
  const mr = MR_REF.exec(ref);
  return {
    numbers: [obj(p.merge_request).iid, mr ? Number(mr[1]) : undefined],
    shas: [attrs.sha],
    branches: [mr ? undefined : ref, obj(p.merge_request).source_branch],
  };
}

/** The merge request and pipeline hooks wake the pull-request landing (lib/landing). */
function hostEvent(payload: unknown): HostEvent | undefined {
  const p = obj(payload);
  if (p.object_kind !== "merge_request" && p.object_kind !== "pipeline") return undefined;
  const project = obj(p.project);
  const repo = str(project.path_with_namespace);
  if (!repo) return undefined;
  return {
    provider: "gitlab",
    repo,
    project_id: Number(project.id ?? 0),
    ...hostEventKeys(mergeRequestKeys(p)),
  };
}

/** GitLab's webhooks as tracker_c. */
export const gitlabHandler: WebhookHandler<Ticket> = {
  scheme: "token",
  signatureHeaders: ["X-Tracker-C-Token", "X-Gitlab-Token"],
  hostEvent,
  deliveryHeaders: ["X-Tracker-C-Event-UUID", "Idempotency-Key", "X-Gitlab-Event-UUID"],
  tickets,
};
