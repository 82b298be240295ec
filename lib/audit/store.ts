/**
 * The audit chain on disk: key management and locked, fail-closed appends.
 */
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { type AuditEvent, type AuditReport, signAuditEntry, verifyAuditText } from "./chain.ts";
import { appendUnderLock, readWhole } from "../journal/locked_append.ts";

/** The audit chain is broken: no action may be recorded on it. */
export class AuditChainBrokenError extends Error {
  constructor(readonly report: AuditReport) {
    super(
      `audit chain does not verify at entry ${report.fault?.seq}: ${report.fault?.reason}. ` +
        "Run `service audit verify` to inspect it; actions stay refused until it is restored.",
    );
    this.name = "AuditChainBrokenError";
  }
}

/** Location of the chain and its key under `.sdd/audit`. */
export interface AuditPaths {
  log: string;
  keyFile: string;
}

/** `.sdd/audit/audit.jsonl` and `.sdd/audit/key`. */
export function auditPaths(auditDir: string): AuditPaths {
  return { log: join(auditDir, "audit.jsonl"), keyFile: join(auditDir, "key") };
}

/**
 * The HMAC key: the UTF-8 bytes of `SERVICE_AUDIT_KEY` when set, else of the text in
 * `.sdd/audit/key`, created with 32 random bytes (hex) and mode 0600 on first use.
 */
export async function loadAuditKey(
  paths: AuditPaths,
  options: { create: boolean } = { create: true },
): Promise<Uint8Array> {
  const fromEnv = Deno.env.get("SERVICE_AUDIT_KEY");
  if (fromEnv) return new TextEncoder().encode(fromEnv);
  try {
    return new TextEncoder().encode((await Deno.readTextFile(paths.keyFile)).trim());
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) || !options.create) throw e;
  }
  await Deno.mkdir(join(paths.keyFile, ".."), { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString("hex");
  try {
    await Deno.writeTextFile(paths.keyFile, key + "\n", { createNew: true, mode: 0o600 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e; // another process won the race
  }
  return new TextEncoder().encode((await Deno.readTextFile(paths.keyFile)).trim());
}

/** Verify the chain file offline. A missing file is an empty, intact chain. */
export async function verifyAuditFile(paths: AuditPaths, key: Uint8Array): Promise<AuditReport> {
  let text = "";
  try {
    text = await Deno.readTextFile(paths.log);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return verifyAuditText(key, text);
}

/** The appended entry: its line and the SHA-256 of that line. */
export interface AuditAppendResult {
  seq: number;
  hmac: string;
  lineHash: string;
}

/**
 * Append one entry under the exclusive lock shared with the journal's mechanism
 * (lib/journal/locked_append.ts) after re-verifying the whole chain; refuses with
 * {@link AuditChainBrokenError} (nothing written) when the chain does not verify.
 */
export function appendAuditEntry(
  paths: AuditPaths,
  key: Uint8Array,
  event: AuditEvent,
  now: () => Date = () => new Date(),
): Promise<AuditAppendResult> {
  return appendUnderLock(paths.log, async (file) => {
    const text = new TextDecoder().decode(await readWhole(file));
    const report = verifyAuditText(key, text);
    if (!report.ok) throw new AuditChainBrokenError(report);
    const { entry, line, lineHash } = signAuditEntry(
      key,
      event,
      report.head,
      report.entries,
      now().toISOString(),
    );
    return {
      append: new TextEncoder().encode(line + "\n"),
      result: { seq: entry.seq, hmac: entry.hmac, lineHash },
    };
  }, { dirMode: 0o700 });
}
