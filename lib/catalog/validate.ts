/**
 * Catalog bytes → a validated catalog or every violation with its JSON path (spec §7.2: any
 * violation rejects the whole document). Pure.
 */
import { formatPath } from "../config/errors.ts";
import { type Catalog, CATALOG_VERSION, CatalogSchema } from "./schema.ts";

/** Largest catalog document accepted; real catalogs are a few hundred KiB. */
export const MAX_CATALOG_BYTES = 8 * 1024 * 1024;

/** One broken rule: where (`entries[3].transports[0]`, or `$` for the document) and what. */
export interface Violation {
  path: string;
  rule: string;
}

/** The document as written (signatures are checked over the entries as written). */
export interface RawCatalog {
  entries: Record<string, unknown>[];
}

/** The outcome of validating a catalog document. */
export type CatalogCheck =
  | { ok: true; catalog: Catalog; raw: RawCatalog }
  | { ok: false; violations: Violation[] };

/** Thrown when a catalog is rejected; its message lists every violation. */
export class CatalogRejectedError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "catalog_rejected";
  constructor(readonly source: string, readonly violations: Violation[], note?: string) {
    super(
      `catalog ${source} rejected (${violations.length} violation${
        violations.length === 1 ? "" : "s"
      }):\n${violations.map((v) => `  ${v.path}: ${v.rule}`).join("\n")}` +
        (note ? `\n${note}` : ""),
    );
    this.name = "CatalogRejectedError";
  }
}

/** Whether `value` at `path` is absent from an object that exists (a missing field). */
function missingAt(value: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let v = value;
  for (const step of path.slice(0, -1)) {
    if (v === null || typeof v !== "object") return false;
    v = (v as Record<PropertyKey, unknown>)[step];
  }
  return v !== null && typeof v === "object" && !Array.isArray(v) &&
    !Object.hasOwn(v, path[path.length - 1]);
}

function issuesToViolations(
  issues: readonly {
    path: readonly PropertyKey[];
    message: string;
    code: string;
    keys?: string[];
  }[],
  value: unknown,
): Violation[] {
  const out: Violation[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys" && issue.keys) {
      for (const key of issue.keys) {
        out.push({
          path: formatPath([...issue.path, key]) || key,
          rule: `unknown field "${key}": the catalog format allows no other fields`,
        });
      }
      continue;
    }
    const missing = missingAt(value, issue.path);
    out.push({
      path: formatPath(issue.path) || "$",
      rule: missing
        ? `missing required field "${String(issue.path.at(-1))}" (${issue.message})`
        : issue.message,
    });
  }
  return out;
}

/** Ids that repeat, reported at the later entries (checked on the raw value, alongside zod). */
function duplicateIds(value: unknown): Violation[] {
  const entries = (value as { entries?: unknown })?.entries;
  if (!Array.isArray(entries)) return [];
  const seen = new Map<string, number>();
  const out: Violation[] = [];
  entries.forEach((e, i) => {
    const id = (e as { id?: unknown })?.id;
    if (typeof id !== "string") return;
    const first = seen.get(id);
    if (first === undefined) seen.set(id, i);
    else {
      out.push({
        path: `entries[${i}].id`,
        rule: `id "${id}" is not unique: entries[${first}] has it too`,
      });
    }
  });
  return out;
}

/** Validate a parsed catalog value. */
export function checkCatalog(value: unknown): CatalogCheck {
  const version = (value as { version?: unknown })?.version;
  if (typeof version === "number" && Number.isInteger(version) && version > CATALOG_VERSION) {
    // A newer format may differ anywhere: the version is the one thing worth saying.
    return {
      ok: false,
      violations: [{
        path: "version",
        rule: `catalog version ${version} is newer than this service release understands ` +
          `(${CATALOG_VERSION}): upgrade the service`,
      }],
    };
  }
  const result = CatalogSchema.safeParse(value);
  const violations = [
    ...(result.success ? [] : issuesToViolations(result.error.issues as never, value)),
    ...duplicateIds(value),
  ];
  if (violations.length > 0 || !result.success) return { ok: false, violations };
  return { ok: true, catalog: result.data, raw: value as RawCatalog };
}

/** Validate catalog bytes: size, UTF-8 JSON, then every rule. */
export function checkCatalogBytes(bytes: Uint8Array): CatalogCheck {
  if (bytes.length > MAX_CATALOG_BYTES) {
    return {
      ok: false,
      violations: [{
        path: "$",
        rule: `the document is ${bytes.length} bytes, over the ${MAX_CATALOG_BYTES}-byte limit`,
      }],
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    return {
      ok: false,
      violations: [{ path: "$", rule: `not valid JSON: ${(e as Error).message}` }],
    };
  }
  return checkCatalog(value);
}
