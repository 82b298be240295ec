/**
 * What a code host's webhook delivery, announced on the activity hub (lib/webhooks/handler.ts
 * `HostEvent`), means for the landing of one repository (pure): nothing when it is another
 * provider's or another repository's; else which pull requests to look at now — those it names
 * by number, head SHA or head branch (a check suite or a commit status names only its SHA; GitLab's
 * pipeline its SHA and ref) — and whether the base branch may have moved (a pull request was
 * merged into it).
 */
import type { WakeHint } from "./poller.ts";

/** What a delivery asks of the landing. */
export interface Wake {
  hint: WakeHint;
  /** A pull request was merged into the landing's base: look at the base's tip now. */
  baseMoved: boolean;
}

/** The landing's own host and repository. */
export interface WakeScope {
  provider: string;
  /** `owner/name`, the GitLab project path, or its numeric id. */
  repo: string;
  base: string;
}

/** Words of a space-separated list (git forbids spaces in branch names). */
function words(value: unknown): string[] {
  return typeof value === "string" ? value.split(" ").filter(Boolean) : [];
}

/** The wake `detail` (a host event's fields) asks of the landing `scope`, or undefined. */
export function wakeOf(
  detail: Record<string, string | number | boolean>,
  scope: WakeScope,
): Wake | undefined {
  if (detail.provider !== scope.provider) return undefined;
  const repo = scope.repo.toLowerCase();
  const named = [detail.repo, detail.project_id].map((v) => String(v ?? "").toLowerCase());
  if (!named.includes(repo)) return undefined;
  return {
    hint: {
      numbers: words(detail.numbers).map(Number).filter((n) => Number.isSafeInteger(n) && n > 0),
      shas: words(detail.shas),
      branches: words(detail.branches),
    },
    baseMoved: detail.merged_into === scope.base,
  };
}
