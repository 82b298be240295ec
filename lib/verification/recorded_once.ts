/**
 * One record per completion (spec §4.3 rule 1), whoever writes it: the completions a run's
 * journal already records (`task_verification_recorded`, perhaps by an earlier process that
 * verified work this one lands) and those being recorded now. A record is claimed before any of
 * its I/O starts, so two verifications of one completion running at once write it once.
 */
import { readLine } from "../journal/event_reader.ts";

/** The record claims of one run journal's completions. */
export class RecordedCompletions {
  readonly #journalPath: string;
  /** `task_id session_id` of every completion recorded or being recorded. */
  #keys: Promise<Set<string>> | undefined;

  /** The completions of the run whose journal is at `journalPath`. */
  constructor(journalPath: string) {
    this.#journalPath = journalPath;
  }

  /**
   * Claim the record of `taskId`'s completion by `sessionId`: true when the caller is to write
   * it, false when it is written or being written. A claimant that fails before the record is
   * durable gives it back with {@link release}.
   */
  async claim(taskId: string, sessionId: string): Promise<boolean> {
    // One read of the journal, shared by every caller that asks before it is done.
    const keys = await (this.#keys ??= recordedKeys(this.#journalPath));
    const key = `${taskId} ${sessionId}`;
    if (keys.has(key)) return false;
    keys.add(key); // no await between the look and the claim: nobody else can claim it meanwhile
    return true;
  }

  /** Give back a claim whose record was not written (a later verification may write it). */
  async release(taskId: string, sessionId: string): Promise<void> {
    (await this.#keys)?.delete(`${taskId} ${sessionId}`);
  }
}

/** `task_id session_id` of every `task_verification_recorded` row of a journal. */
async function recordedKeys(journalPath: string): Promise<Set<string>> {
  const keys = new Set<string>();
  let text = "";
  try {
    text = await Deno.readTextFile(journalPath);
  } catch { /* no journal yet */ }
  for (const line of text.split("\n")) {
    if (!line.includes('"task_verification_recorded"')) continue;
    const event = readLine(line); // a torn line records nothing
    if (event?.type === "task_verification_recorded") {
      keys.add(`${event.task_id} ${event.session_id}`);
    }
  }
  return keys;
}
