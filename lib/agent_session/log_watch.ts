/**
 * Reads the lines an agent wrote since the last look, as its adapter reads them, and runs the
 * rate-limit reader over them. While the agent runs, a partial last line waits for its newline.
 */
import { logParserFor } from "../agents/adapters/mod.ts";
import { firstRateLimit, type RateLimitMatch, scanLog } from "../agents/rate_limit.ts";

/** What a look at the log found, and where the next look starts. */
export interface LogScan {
  match?: RateLimitMatch;
  scannedTo: number;
}

/**
 * Scan `logPath` from byte `from` as `adapter` (its name) reads it; with `alive`, a last line
 * without newline is left for later.
 */
export async function scanNewLines(
  logPath: string,
  from: number,
  alive: boolean,
  adapter?: string,
): Promise<LogScan> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(logPath);
  } catch {
    return { scannedTo: from };
  }
  let fresh = bytes.subarray(from);
  if (alive) fresh = fresh.subarray(0, fresh.lastIndexOf(10) + 1);
  return {
    match: firstRateLimit(scanLog(new TextDecoder().decode(fresh), logParserFor(adapter))),
    scannedTo: from + fresh.length,
  };
}
