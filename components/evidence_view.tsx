/** The evidence bundle of a task (spec §2.5) with its recomputed `bundle_hash`. */

/** Props of {@link EvidenceView}: the served bundle, or null when none was declared (404). */
export interface EvidenceViewProps {
  bundle: Record<string, unknown> | null;
}

/** The bundle hash and the bundle itself, or the "no producers" notice. */
export function EvidenceView({ bundle }: EvidenceViewProps) {
  if (bundle === null) return <p class="muted" data-no-evidence>no evidence producers declared</p>;
  const matches = bundle.bundle_hash_matches;
  return (
    <div>
      <dl class="kv">
        <dt>bundle hash (recomputed)</dt>
        <dd class="hash" data-bundle-hash>{String(bundle.bundle_hash)}</dd>
        {matches !== undefined && matches !== null && (
          <>
            <dt>stored hash</dt>
            <dd>
              {matches
                ? <span class="badge ok">matches</span>
                : <span class="badge bad">DOES NOT MATCH</span>}
            </dd>
          </>
        )}
      </dl>
      <details>
        <summary>bundle contents</summary>
        <pre class="evidence">{JSON.stringify(bundle, null, 2)}</pre>
      </details>
    </div>
  );
}
