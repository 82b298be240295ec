/** POST /dashboard/review-board/runs/<run_id>/tasks/<task_id>/review — an attested review action. */
import type { Ctx } from "../../../../../../../lib/http/context.ts";
import { HttpError } from "../../../../../../../lib/http/errors.ts";
import { requireId } from "../../../../../../../lib/ids.ts";
import { requireRunJournal } from "../../../../../../../lib/runs/runs.ts";
import { recordReview, ReviewRequest } from "../../../../../../../lib/review/action.ts";
import { auditPaths } from "../../../../../../../lib/audit/store.ts";
import { readJsonBody } from "../../../../../../../lib/http/body.ts";
import { routePolicy } from "../../../../../../../lib/http/route_policy.ts";
import { ifMatchTags } from "../../../../../../../lib/http/if_match.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Validate, record on journal and audit chain, answer the receipt and the re-folded board. */
export async function POST(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const taskId = requireId("task_id", c.req.param("task_id")!);
  const app = c.get("app");
  const journalPath = await requireRunJournal(app.paths, runId);
  const parsed = ReviewRequest.safeParse(await readJsonBody(c));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpError(
      422,
      "invalid_review",
      `${
        issue.path.join(".") || "body"
      }: ${issue.message}. Send {"decision": "approve" | "request_changes" | "merge", "note"?: string}`,
    );
  }
  const ifMatch = ifMatchTags(c.req.header("if-match"));
  const { receipt, board } = await recordReview(parsed.data, {
    runId,
    taskId,
    journalPath,
    audit: auditPaths(app.paths.audit),
    auditKey: app.auditKey,
    principal: c.get("principal"),
    ifMatch,
    now: app.now,
    paths: app.paths,
  });
  return c.json({ receipt, board });
}
