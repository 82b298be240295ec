/** The receipt of a review action (spec §2.6), as returned by the server. */
import type { ReviewReceipt } from "../../lib/review/types.ts";

/** Props of {@link ReviewReceiptView}. */
export interface ReviewReceiptViewProps {
  receipt: ReviewReceipt;
}

/** Every field of the receipt, hashes in full so they can be matched against the files. */
export function ReviewReceiptView({ receipt }: ReviewReceiptViewProps) {
  const rows: [string, string | null][] = [
    ["decision", receipt.decision],
    ["principal", `${receipt.principal} (${receipt.scope})`],
    ["projection hash seen", receipt.projection_hash],
    ["journal head", receipt.journal_head],
    ["journal entry hash", receipt.journal_entry_hash],
    ["diff", receipt.diff_sha256],
    ["audit entry hash", receipt.audit_event_hash],
  ];
  return (
    <section class="receipt" aria-label="review receipt" data-review-receipt role="status">
      <h3>Recorded</h3>
      <dl class="kv">
        {rows.map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd class={k === "decision" || k === "principal" ? "" : "hash"}>{v ?? "none"}</dd>
          </>
        ))}
      </dl>
    </section>
  );
}
