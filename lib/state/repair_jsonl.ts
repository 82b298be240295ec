/**
 * Repair of JSONL state files with a torn or corrupt tail (spec §7.3 "JSON parse error on
 * start"): every line that parses is kept in order, the rest is moved aside to
 * `<file>.corrupt-<timestamp>`, never deleted. NEVER use this on run journals: a torn journal
 * must stay visibly unverified.
 */
import { basename } from "node:path";
import { writeFileAtomic } from "../util/atomic_write.ts";

/** What a repair did. */
export interface JsonlRepair {
  path: string;
  kept: number;
  dropped: number;
  /** Where the dropped lines went (absent when nothing was dropped). */
  movedTo?: string;
  /** The first dropped line, shortened, to tell the operator what was lost. */
  sample?: string;
}

/** Split JSONL text into lines that parse and lines that do not (pure). */
function partitionJsonl(text: string): { good: string[]; bad: string[] } {
  const good: string[] = [];
  const bad: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      JSON.parse(line);
      good.push(line);
    } catch {
      bad.push(line);
    }
  }
  return { good, bad };
}

/** Timestamp usable in a file name. */
export function fileStamp(date = new Date()): string {
  return date.toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
}

/**
 * Repair `path` in place when some line does not parse or the last line lacks its newline.
 * A missing file needs no repair (undefined).
 */
export async function repairJsonl(
  path: string,
  now = new Date(),
): Promise<JsonlRepair | undefined> {
  if (basename(path) === "journal.jsonl") {
    throw new Error(`refusing to repair run journal ${path}: torn journals stay unverified`);
  }
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  const { good, bad } = partitionJsonl(text);
  if (bad.length === 0) {
    if (text !== "" && !text.endsWith("\n")) await Deno.writeTextFile(path, "\n", { append: true });
    return { path, kept: good.length, dropped: 0 };
  }
  const movedTo = `${path}.corrupt-${fileStamp(now)}`;
  await writeFileAtomic(movedTo, bad.join("\n") + "\n");
  await writeFileAtomic(path, good.length ? good.join("\n") + "\n" : "");
  return {
    path,
    kept: good.length,
    dropped: bad.length,
    movedTo,
    sample: bad[0].length > 80 ? `${bad[0].slice(0, 80)}…` : bad[0],
  };
}
