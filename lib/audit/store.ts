/**
 * The audit chain on disk: key management and locked, fail-closed appends.
 */
import { dirname, join } from "node:path";
import { ConflictError } from "../errors.ts";
import { createFileAtomic } from "../util/atomic_write.ts";
import { randomBytes } from "node:crypto";
import { type AuditEvent, type AuditReport, signAuditEntry, verifyAuditText } from "./chain.ts";
import { appendUnderLock, readWhole, takeBackLastLine } from "../util/locked_append.ts";
import { sha256Hex } from "../journal/hash.ts";

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
 * `.sdd/audit/key`, created whole (never empty or partial, even on a full disk) with 32 random
 * bytes (hex) and mode 0600 on first use. An empty key file is refused: an empty key would sign
 * entries anyone can forge.
 */
export async function loadAuditKey(
  paths: AuditPaths,
  options: { create: boolean } = { create: true },
): Promise<Uint8Array> {
  const fromEnv = Deno.env.get("SERVICE_AUDIT_KEY");
  if (fromEnv) return new TextEncoder().encode(fromEnv);
  const stored = await readKey(paths.keyFile);
  if (stored !== undefined || !options.create) {
    if (stored === undefined) throw new Deno.errors.NotFound(`no audit key at ${paths.keyFile}`);
    return stored;
  }
  await Deno.mkdir(dirname(paths.keyFile), { recursive: true, mode: 0o700 });
  // A concurrent process may create it first: then its key is the key.
  await createFileAtomic(paths.keyFile, randomBytes(32).toString("hex") + "\n", 0o600);
  return (await readKey(paths.keyFile))!;
}

/** The key in `file`, undefined when there is none; an empty file is an error naming the fix. */
async function readKey(file: string): Promise<Uint8Array | undefined> {
  let text: string;
  try {
    text = (await Deno.readTextFile(file)).trim();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  if (text === "") {
    throw new ConflictError(
      "audit_key_empty",
      `the audit key ${file} is empty (a write of it was cut short): restore it from a backup, ` +
        "or, when .sdd/audit/audit.jsonl is empty or absent, delete it and a new key is made",
    );
  }
  return new TextEncoder().encode(text);
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

/** The key {@link appendAuditEntry} signs with, and its clock. */
export interface AuditAppendOptions {
  key: Uint8Array;
  /** The entry's `ts` (default: the wall clock). */
  now?: () => Date;
}

/**
 * Append one entry under the exclusive lock shared with the journal's mechanism
 * (lib/util/locked_append.ts) after re-verifying the whole chain; refuses with
 * {@link AuditChainBrokenError} (nothing written) when the chain does not verify.
 */
export function appendAuditEntry(
  paths: AuditPaths,
  event: AuditEvent,
  { key, now = () => new Date() }: AuditAppendOptions,
): Promise<AuditAppendResult> {
  return appendUnderLock(paths.log, async (file) => {
    const text = new TextDecoder().decode(await readWhole(file));
    const report = verifyAuditText(key, text);
    if (!report.ok) throw new AuditChainBrokenError(report);
    const { entry, line, lineHash } = signAuditEntry(key, event, {
      prev: report.head,
      seq: report.entries,
      ts: now().toISOString(),
    });
    return {
      append: new TextEncoder().encode(line + "\n"),
      result: { seq: entry.seq, hmac: entry.hmac, lineHash },
    };
  }, { dirMode: 0o700 });
}

/**
 * Take back the entry whose line hashes to `lineHash` when it is still the chain's last: an
 * action whose journal row could not be written never happened, so its entry must not stay. An
 * entry something was chained onto since stays; the cross-check then reports it as an entry
 * without its row. Returns whether it was taken back.
 */
export function retractAuditEntry(paths: AuditPaths, lineHash: string): Promise<boolean> {
  return takeBackLastLine(paths.log, (line) => sha256Hex(line) === lineHash);
}
