/** The projection receipt of the board on screen; a JOURNAL TAMPERED stamp when it does not verify. */
import type { ProjectionReceipt } from "../../lib/board/types.ts";
import type { RunOutline } from "../../lib/review/types.ts";

/** Props of {@link JournalReceipt}. */
export interface JournalReceiptProps {
  receipt: ProjectionReceipt;
  /** Where the journal and the signed audit chain disagree (the run outline names the row). */
  disagreement?: string;
  /** Where and how the journal does not verify (the runs list's `journal_damage.words`). */
  damage?: string;
  /** Rows that count for nothing (malformed), as the run outline lists them. */
  ignored?: RunOutline["ignored_rows"];
}

/** The verification banner above the columns. */
export function JournalReceipt(
  { receipt, damage, disagreement, ignored }: JournalReceiptProps,
) {
  const tampered = !receipt.journal_verified;
  return (
    <section
      class={`banner ${tampered ? "tampered" : "verified"}`}
      role={tampered ? "alert" : undefined}
      aria-label="journal receipt"
      data-journal-verified={String(receipt.journal_verified)}
    >
      <p style="margin:0 0 .3rem">
        {tampered && disagreement
          ? (
            <>
              <strong class="stamp">JOURNAL TAMPERED</strong>{" "}
              — the journal and the signed audit chain disagree:{" "}
              {disagreement}. The board below is what the rows say now; review actions are disabled.
            </>
          )
          : tampered
          ? (
            <>
              <strong class="stamp">JOURNAL TAMPERED</strong>{" "}
              — the run's hash chain does not recompute {damage
                ? <span data-journal-damage>({damage})</span>
                : "(a row was edited, reordered or torn)"}. The board below is what the rows say
              now; review actions are disabled and the run cannot be resumed. Keep the file as
              evidence; <code>service status</code> says how to start anew.
            </>
          )
          : <strong class="stamp">journal verified</strong>}
      </p>
      <dl class="kv">
        <dt>run</dt>
        <dd class="mono">{receipt.run_id}</dd>
        <dt>projection hash</dt>
        <dd class="hash" data-projection-hash>{receipt.projection_hash}</dd>
        <dt>journal head</dt>
        <dd class="hash">{receipt.journal_head}</dd>
        <dt>events</dt>
        <dd>{receipt.event_count}</dd>
      </dl>
      {ignored && (
        <p class="muted" style="margin:.3rem 0 0" data-ignored-rows={ignored.count}>
          {ignored.count === 1
            ? "1 row of this journal counts"
            : `${ignored.count} rows of this journal count`}{" "}
          for nothing — malformed, so the board and every view ignore{" "}
          {ignored.count === 1 ? "it" : "them"}: {ignored.rows.map((r) =>
            `row ${r.index} ${r.type} (${r.reason})`
          ).join("; ")}
          {ignored.count > ignored.rows.length ? "; …" : ""}.
        </p>
      )}
    </section>
  );
}
