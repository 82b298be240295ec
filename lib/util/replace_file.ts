/**
 * Whole-file replacement that no reader ever sees torn, without the syncs of
 * lib/util/atomic_write.ts: for small files that protect nothing a power loss must find — a live
 * agent's PID file and heartbeat (the agents die with the machine; after a crash of the service
 * alone, the kernel still holds what it wrote). The bytes go to a temporary file named as
 * atomic_write names its own (`<name>.tmp-<pid>-<suffix>`, so lib/state/startup_repair.ts removes
 * one a killed writer left) and are renamed over the file, all in place on the event loop: a few
 * kilobytes to the page cache take microseconds, and each of the syncs and their thread-pool
 * hand-offs cost more than the write (issue 32). Readers must take an unreadable file as missing
 * (after a power loss it may be empty).
 */
import { dirname } from "node:path";
import { storageFailure } from "../errors.ts";
import { tempPathFor } from "./atomic_write.ts";

/** Replace `path` with `text`; its directory is made on first use. */
export function replaceFile(path: string, text: string): void {
  const tmp = tempPathFor(path);
  const data = new TextEncoder().encode(text);
  try {
    try {
      Deno.writeFileSync(tmp, data, { createNew: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      Deno.mkdirSync(dirname(tmp), { recursive: true });
      Deno.writeFileSync(tmp, data, { createNew: true });
    }
    Deno.renameSync(tmp, path);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never made, or already renamed */ }
    throw storageFailure(e, path);
  }
}
