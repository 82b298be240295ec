/**
 * One card of the board: task id, the current attempt's number, "batch" when the attempt is a
 * request to a provider's batch API, title and role, where the task
 * stands when its column does not say it (FAILED, cancelled, blocked, waiting, no changes), a
 * tampered evidence bundle, the diff summary (not for a completion with no changes: "no
 * changes" says it), protected paths and files outside owned_files its diff touches (DESIGN.md
 * §18), and the current attempt's gate receipts and verdict.
 */
import type { CardFace } from "../../lib/dashboard/card_face.ts";
import { STATE_WORDS } from "./run_outline.tsx";
import { CardTitle } from "./card_title.tsx";
import { gateSaid, gateText } from "../../lib/verification/gate_words.ts";
import { showBidiControls } from "../../lib/dashboard/bidi_controls.ts";
import { AgentText } from "./agent_text.tsx";
import { sizeText } from "../../lib/util/size_words.ts";
import type { OversizedFiles } from "../../lib/board/activity_types.ts";

/** The first few files over the size limit with their sizes, then how many more. */
function oversizedWords(o: OversizedFiles): string {
  const shown = o.files.slice(0, 3).map((f) => `${f.path} (${sizeText(f.bytes)})`).join(", ");
  const more = (o.files_total ?? o.files.length) - Math.min(o.files.length, 3);
  return shown + (more > 0 ? ` and ${more} more` : "");
}

/** The card's note on protected paths (DESIGN.md §18). */
function ProtectedBadge({ guarded }: { guarded: NonNullable<CardFace["guarded"]> }) {
  return (
    <span
      class="meta"
      data-protected-paths={guarded.paths.join("\n")}
      title="an agent's change to these never lands unattended (protected_paths)"
    >
      <span class="badge bad">PROTECTED</span>{" "}
      {guarded.error ?? `changes ${fewPaths(guarded.paths)}`}
      {" — lands only on an operator's merge"}
    </span>
  );
}

/** The card's note on files over `max_landed_file_mb` (DESIGN.md §18). */
function OversizedBadge({ oversized }: { oversized: OversizedFiles }) {
  return (
    <span
      class="meta"
      data-oversized-files={oversized.files.map((f) => f.path).join("\n")}
      title="an agent's file over this size never lands unattended (max_landed_file_mb)"
    >
      <span class="badge bad">TOO LARGE</span> adds {oversizedWords(oversized)}
      {" — over max_landed_file_mb"}
      {oversized.limit_bytes !== undefined ? ` (${sizeText(oversized.limit_bytes)})` : ""}
      {"; lands only on an operator's merge"}
    </span>
  );
}

/** Props of {@link CardView}. */
export interface CardViewProps {
  face: CardFace;
  selected?: boolean;
  onSelect?: (taskId: string) => void;
}

/** The longest a card's gate line quotes of a gate's output. */
const CARD_OUTPUT_CHARS = 200;

/**
 * A gate receipt as a card shows it: what the gate's output said (`quality_gate tests (exit 1):
 * failed: test/parse.js`) rather than the command, which the task's detail shows with the whole
 * tail — the words the terminal and `service status` use (lib/verification/gate_words.ts).
 */
export function cardGateText(gate: unknown): string {
  return gateSaid(gate, CARD_OUTPUT_CHARS);
}

/**
 * Where an agent ran (`task_claimed.isolation`, DESIGN.md §14), in words: `in a podman
 * container (image 0123456789ab)` or `as a host process`.
 */
export function isolationWords(isolation: string): string {
  const [kind, runtime, id] = isolation.split(":");
  if (kind !== "container") return "as a host process";
  return `in a ${runtime} container (image ${(id ?? "").slice(0, 12)})`;
}

/** The first few of `paths`, then how many more (the task detail's diff lists them all). */
export function fewPaths(paths: readonly string[], shown = 4): string {
  const head = paths.slice(0, shown).join(", ");
  return paths.length > shown ? `${head} and ${paths.length - shown} more` : head;
}

/** A card as a toggle button that selects the task for review. */
export function CardView({ face, selected = false, onSelect }: CardViewProps) {
  const { card, standing, evidence } = face;
  const { diff, verdict } = card;
  return (
    <button
      type="button"
      class="card"
      aria-pressed={selected}
      data-task-id={card.task_id}
      data-state={standing?.state}
      onClick={() => onSelect?.(card.task_id)}
    >
      <span class="id">{card.task_id}</span>
      {standing && (
        <>
          {" "}
          <span
            class={`badge ${
              standing.state === "waiting" || standing.state === "unchanged" ? "" : "bad"
            }`}
          >
            {STATE_WORDS[standing.state]}
          </span>
        </>
      )}
      {face.attempt !== undefined && face.attempt > 1 && (
        <>
          {" "}
          <span
            class="attempt"
            data-attempt-number={face.attempt}
            title={face.history ? "earlier attempts are in the task detail" : undefined}
          >
            attempt {face.attempt}
          </span>
        </>
      )}
      {face.batch && (
        <>
          {" "}
          <span
            class="badge"
            data-lane="batch"
            title={`a request to the ${face.batch.provider ?? "provider"}'s batch API${
              face.batch.batch_id ? ` (${face.batch.batch_id})` : ""
            }${face.batch.outcome ? `: ${face.batch.outcome.replace("_", " ")}` : ", in flight"}`}
          >
            batch
          </span>
        </>
      )}
      {(card.title || card.role) && (
        <span class="meta">
          {card.title && <CardTitle title={card.title} />}
          {card.title && card.role ? " · " : ""}
          {card.role && <em>{card.role}</em>}
        </span>
      )}
      {
        // The gate rows say why a task FAILED or was cancelled; otherwise the reason does.
        standing?.reason && !card.gates?.length && (
          <span class="meta" data-standing-reason>
            <AgentText text={standing.reason} />
          </span>
        )
      }
      {evidence && !evidence.verified && (
        <span class="meta" data-card-evidence="unverified" title={evidence.problems.join("\n")}>
          <span class="badge bad">EVIDENCE UNVERIFIED</span>{" "}
          its sealed bundle no longer checks (the evidence panel says why)
        </span>
      )}
      {diff && standing?.state !== "unchanged" && (
        <span class="meta" data-diff-summary>
          <span class="plus">+{diff.added}</span> <span class="minus">−{diff.removed}</span>,{" "}
          {diff.files} {diff.files === 1 ? "file" : "files"}
        </span>
      )}
      {face.guarded && <ProtectedBadge guarded={face.guarded} />}
      {face.oversized && <OversizedBadge oversized={face.oversized} />}
      {face.ownedExceeded && (
        <span
          class="meta"
          data-owned-files-exceeded={face.ownedExceeded.paths.join("\n")}
          title={`owned_files: ${face.ownedExceeded.owned_files.join(", ")}`}
        >
          <span class="badge bad">
            {face.ownedExceeded.enforced ? "REFUSED" : "OUTSIDE OWNED FILES"}
          </span>{" "}
          changes {fewPaths(face.ownedExceeded.paths)} outside its owned_files
        </span>
      )}
      {face.isolation && (
        <span class="meta" data-isolation={face.isolation} title={face.isolation}>
          agent: {isolationWords(face.isolation)}
        </span>
      )}
      {card.gates?.map((gate, i) => (
        <span class="gate" key={i} title={showBidiControls(gateText(gate))}>
          ✗ <AgentText text={cardGateText(gate)} />
        </span>
      ))}
      {verdict && (
        <span class="verdict" data-verdict={verdict.decision}>
          <strong>{verdict.decision.replace("_", " ")}</strong> by {verdict.principal}
          {verdict.note ? `: “${showBidiControls(verdict.note)}”` : ""}
        </span>
      )}
    </button>
  );
}
