/**
 * The MCP server catalog document (spec §2.1–§2.2, §8, §9 rule 1), as a strict zod schema:
 * unknown fields anywhere are rejected, every rule of the tables is checked, and each failure
 * carries a message that says what the rule is.
 */
import { z } from "zod";

/** The catalog version this release understands (spec §9 rule 1). */
export const CATALOG_VERSION = 1;

/** Longest entry id (spec §8). */
const MAX_ID_LENGTH = 80;

/** The entry id pattern (spec §2.2). JS `$` never matches before a trailing newline. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

/** The transports an entry may name (spec §2.2). */
const TRANSPORTS = ["stdio", "http", "sse"] as const;

/** True when `s` is an absolute URI: a scheme, and for http(s) a host; no spaces. */
function isUri(s: string): boolean {
  if (/\s/.test(s) || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return false;
  try {
    const url = new URL(s);
    if ((url.protocol === "http:" || url.protocol === "https:") && !url.hostname) return false;
    return true;
  } catch {
    return false;
  }
}

/** An ISO-8601 UTC date-time (`Z` suffix) that names a real instant. */
function isUtcDateTime(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$/.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, se));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d &&
    h < 24 && mi < 60 && se < 60;
}

const nonEmpty = (field: string) =>
  z.string({ error: `${field} must be a string` }).min(1, `${field} must not be empty`);

const uri = (field: string) =>
  z.string({ error: `${field} must be a string` }).refine(
    isUri,
    `${field} must be an absolute URI such as https://example.com/…`,
  );

/** `install_command`: an argv array; a single shell string is refused with the reason. */
const InstallCommandSchema = z.unknown().superRefine((v, ctx) => {
  if (typeof v === "string") {
    ctx.addIssue({
      code: "custom",
      message: 'install_command must be an argv array such as ["npx", "-y", "pkg@1.0.0"], ' +
        "not a single shell string: the service never runs install commands through a shell",
    });
    return;
  }
  if (!Array.isArray(v)) {
    ctx.addIssue({ code: "custom", message: "install_command must be an array of strings" });
    return;
  }
  if (v.length === 0) {
    ctx.addIssue({ code: "custom", message: "install_command must have at least 1 item" });
    return;
  }
  v.forEach((item, i) => {
    if (typeof item !== "string" || item.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: [i],
        message: "each install_command item must be a non-empty string",
      });
    }
  });
  if (typeof v[0] === "string" && /\s/.test(v[0])) {
    ctx.addIssue({
      code: "custom",
      path: [0],
      message: "the program name contains whitespace: this looks like a shell string; " +
        'split it into argv items ("npx", "-y", "pkg")',
    });
  }
}).transform((v) => v as string[]);

/** One installable MCP server manifest (spec §2.2). */
export const CatalogEntrySchema = z.strictObject({
  id: z.string({ error: "id must be a string" })
    .min(1, "id must not be empty")
    .max(MAX_ID_LENGTH, `id must be at most ${MAX_ID_LENGTH} characters`)
    .regex(
      ID_PATTERN,
      "id must match ^[a-z0-9][a-z0-9._-]*$ (lower-case letters, digits, '.', '_', '-')",
    ),
  name: nonEmpty("name"),
  description: nonEmpty("description"),
  homepage: uri("homepage"),
  repository: uri("repository"),
  install_command: InstallCommandSchema,
  version_pin: nonEmpty("version_pin"),
  transports: z.array(
    z.enum(TRANSPORTS, { error: `each transport must be one of ${TRANSPORTS.join(", ")}` }),
    { error: "transports must be an array" },
  ).min(1, "transports must have at least 1 item"),
  verified_by_service: z.boolean({ error: "verified_by_service must be true or false" }),
  auto_upgrade: z.boolean({ error: "auto_upgrade must be true or false" }).default(false),
  signature: z.string({ error: "signature must be a string" }).optional(),
  command: nonEmpty("command").optional(),
  args: z.array(z.string({ error: "each args item must be a string" }), {
    error: "args must be an array of strings",
  }).optional(),
  env: z.record(z.string(), z.string({ error: "env values must be strings" }), {
    error: "env must be an object of string values",
  }).optional(),
}, { error: "each entry must be an object" });

/** A validated catalog entry (`auto_upgrade` filled in). */
export type CatalogEntry = z.output<typeof CatalogEntrySchema>;

/** The whole catalog document (spec §2.1). */
export const CatalogSchema = z.strictObject({
  version: z.number({ error: "version must be an integer" })
    .int("version must be an integer")
    .min(1, "version must be at least 1")
    .max(
      CATALOG_VERSION,
      `this service release understands catalog version ${CATALOG_VERSION}: upgrade the service to read newer catalogs`,
    ),
  generated_at: z.string({ error: "generated_at must be a string" }).refine(
    isUtcDateTime,
    "generated_at must be an ISO-8601 UTC date-time such as 2026-01-31T12:00:00Z",
  ),
  entries: z.array(CatalogEntrySchema, { error: "entries must be an array" }),
}, { error: "the catalog must be a JSON object" });

/** A validated catalog document. */
export type Catalog = z.output<typeof CatalogSchema>;
