/**
 * Fetching the catalog with a per-user cache (DESIGN.md §9): a fresh cache (1 hour) is used
 * without a request, a stale one revalidates with `If-None-Match` (304 keeps it), a local file's
 * mtime is its validator. A rejected document or a network failure keeps the cached copy: the
 * rejection is an error listing every violation, the network failure a warning.
 */
import { join } from "node:path";
import { createHash } from "node:crypto";
import { writeFileAtomic } from "../util/atomic_write.ts";
import type { Catalog } from "./schema.ts";
import {
  type CatalogLocation,
  type CatalogSource,
  describeLocation,
  httpUrlProblem,
} from "./source.ts";
import {
  CatalogRejectedError,
  checkCatalogBytes,
  MAX_CATALOG_BYTES,
  type RawCatalog,
  type Violation,
} from "./validate.ts";
import { SERVICE_VERSION } from "../version.ts";
import { HttpApiError } from "../http/api_error.ts";
import { createHttpClient } from "../http/client.ts";

/** How long a cached catalog is used without asking the server. */
export const CATALOG_FRESH_MS = 60 * 60 * 1000;

/** Default time limit of one catalog request (every redirect hop, connect and body). */
const CATALOG_TIMEOUT_MS = 20_000;

/** How the catalog in hand was obtained. */
export type CatalogHow = "cache" | "downloaded" | "revalidated" | "file";

/** A usable catalog and how it was obtained. */
export interface LoadedCatalog {
  catalog: Catalog;
  raw: RawCatalog;
  /** The location that served it (primary or mirror). */
  servedBy: string;
  how: CatalogHow;
  /** When its bytes were obtained (ISO). */
  fetchedAt: string;
  /** Things the user should know (network failure, stale copy kept). */
  warnings: string[];
}

/** No catalog at all: none could be fetched and none is cached. */
export class CatalogUnavailableError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "catalog_unavailable";
  constructor(message: string) {
    super(message);
    this.name = "CatalogUnavailableError";
  }
}

/** Options of {@link loadCatalog}. */
export interface LoadCatalogOptions {
  /** `$XDG_CACHE_HOME/service`. */
  cacheDir: string;
  /** Skip the freshness window. */
  refresh?: boolean;
  timeoutMs?: number;
  now?: () => number;
}

interface CacheMeta {
  source: string;
  served_by: string;
  etag?: string;
  fetched_at: string;
  /** Last time the source was asked (ms), whatever the answer. */
  checked_at: number;
  /** For a local file: its mtime when read (ms). */
  mtime_ms?: number;
  /** The last check's document was rejected: when, and what it broke. */
  rejected?: { at: string; mtime_ms?: number; violations: Violation[] };
}

interface Cached {
  meta: CacheMeta;
  bytes: Uint8Array;
  catalog: Catalog;
  raw: RawCatalog;
}

function cacheFiles(cacheDir: string, source: string) {
  const key = createHash("sha256").update(source).digest("hex").slice(0, 16);
  return {
    body: join(cacheDir, `mcp-catalog-${key}.json`),
    meta: join(cacheDir, `mcp-catalog-${key}.meta.json`),
  };
}

async function readCache(files: { body: string; meta: string }): Promise<Cached | undefined> {
  try {
    const meta = JSON.parse(await Deno.readTextFile(files.meta)) as CacheMeta;
    const bytes = await Deno.readFile(files.body);
    const check = checkCatalogBytes(bytes);
    if (!check.ok) return undefined; // a damaged cache is no cache
    return { meta, bytes, catalog: check.catalog, raw: check.raw };
  } catch {
    return undefined;
  }
}

async function writeCache(
  cacheDir: string,
  files: { body: string; meta: string },
  meta: CacheMeta,
  bytes?: Uint8Array,
): Promise<void> {
  await Deno.mkdir(cacheDir, { recursive: true });
  if (bytes) await writeFileAtomic(files.body, bytes);
  await writeFileAtomic(files.meta, JSON.stringify(meta, null, 2) + "\n");
}

type FetchOutcome =
  | { kind: "not_modified" }
  | { kind: "body"; bytes: Uint8Array; etag?: string; mtimeMs?: number }
  | { kind: "failed"; reason: string };

/** Redirects followed at most. */
const MAX_REDIRECTS = 5;

/**
 * GET `url`, following redirects by hand: every hop must pass the rule the configured URL passed
 * (`httpUrlProblem`), so an allowed URL cannot hand the request to one that would be refused.
 * One time limit covers every hop and the body, which is read no further than one byte past the
 * limit (the validator then refuses it by its size).
 */
async function fetchHttp(
  url: string,
  etag: string | undefined,
  timeoutMs: number,
): Promise<FetchOutcome> {
  const http = createHttpClient({
    service: "the catalog server",
    headers: { accept: "application/json", "user-agent": `service/${SERVICE_VERSION}` },
  });
  const deadline = performance.now() + timeoutMs;
  const get = (at: string) =>
    http.request(at, {
      headers: etag ? { "if-none-match": etag } : {},
      redirect: "manual",
      maxBytes: MAX_CATALOG_BYTES + 1,
      timeoutMs: Math.max(1, Math.round(deadline - performance.now())),
    });
  let at = url;
  try {
    let answer = await get(at);
    for (let hops = 0; answer.status >= 300 && answer.status < 400 && answer.status !== 304;) {
      const location = answer.headers.get("location");
      if (!location) {
        return {
          kind: "failed",
          reason: `${at} answered HTTP ${answer.status} without a Location`,
        };
      }
      const next = new URL(location, at);
      const problem = httpUrlProblem(next);
      if (problem) {
        return {
          kind: "failed",
          reason: `${url} redirected to ${next.href}, which ${problem}; the redirect was refused`,
        };
      }
      if (++hops > MAX_REDIRECTS) {
        return { kind: "failed", reason: `${url} redirected more than ${MAX_REDIRECTS} times` };
      }
      at = next.href;
      answer = await get(at);
    }
    if (answer.status === 304) return { kind: "not_modified" };
    const etagNow = answer.headers.get("etag") ?? undefined;
    return { kind: "body", bytes: answer.body, etag: etagNow };
  } catch (e) {
    if (e instanceof HttpApiError) return { kind: "failed", reason: e.message };
    throw e;
  }
}

async function readLocal(path: string): Promise<FetchOutcome> {
  try {
    const info = await Deno.stat(path);
    if (info.size > MAX_CATALOG_BYTES) {
      // Read no more than the limit and a byte: the validator refuses it by size.
      using file = await Deno.open(path);
      const buf = new Uint8Array(MAX_CATALOG_BYTES + 1);
      let at = 0;
      while (at < buf.length) {
        const n = await file.read(buf.subarray(at));
        if (n === null) break;
        at += n;
      }
      return { kind: "body", bytes: buf.subarray(0, at), mtimeMs: info.mtime?.getTime() };
    }
    return { kind: "body", bytes: await Deno.readFile(path), mtimeMs: info.mtime?.getTime() };
  } catch (e) {
    return { kind: "failed", reason: `cannot read ${path}: ${(e as Error).message}` };
  }
}

async function localMtime(path: string): Promise<number | undefined> {
  try {
    return (await Deno.stat(path)).mtime?.getTime();
  } catch {
    return undefined;
  }
}

function fromCache(cached: Cached, how: CatalogHow, warnings: string[] = []): LoadedCatalog {
  return {
    catalog: cached.catalog,
    raw: cached.raw,
    servedBy: cached.meta.served_by,
    how,
    fetchedAt: cached.meta.fetched_at,
    warnings,
  };
}

function rejectionNote(cached: Cached): string[] {
  const r = cached.meta.rejected;
  if (!r) return [];
  return [
    `the catalog was rejected at ${r.at} (${r.violations.length} violation(s)); ` +
    `using the cached copy fetched at ${cached.meta.fetched_at} (\`--refresh\` checks again)`,
  ];
}

/**
 * The catalog of `source`: from the cache when fresh, else fetched (primary, then mirror) and
 * validated. Throws {@link CatalogRejectedError} when the fetched document breaks a rule (the
 * cache stays and is used by later commands), {@link CatalogUnavailableError} when nothing is
 * reachable and nothing is cached.
 */
export async function loadCatalog(
  source: CatalogSource,
  options: LoadCatalogOptions,
): Promise<LoadedCatalog> {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? CATALOG_TIMEOUT_MS;
  const sourceName = describeLocation(source.primary);
  const files = cacheFiles(options.cacheDir, sourceName);
  const cached = await readCache(files);
  const usable = cached && cached.meta.source === sourceName ? cached : undefined;

  if (usable && !options.refresh) {
    if (source.primary.kind === "file") {
      const mtime = await localMtime(source.primary.path);
      if (mtime !== undefined && mtime === usable.meta.mtime_ms) return fromCache(usable, "cache");
      if (mtime !== undefined && mtime === usable.meta.rejected?.mtime_ms) {
        return fromCache(usable, "cache", rejectionNote(usable));
      }
    } else if (now() - usable.meta.checked_at < CATALOG_FRESH_MS) {
      return fromCache(usable, "cache", rejectionNote(usable));
    }
  }

  const attempt = (location: CatalogLocation) =>
    location.kind === "file"
      ? readLocal(location.path)
      : fetchHttp(location.url, usable?.meta.etag, timeoutMs);
  const failures: string[] = [];
  let servedBy = sourceName;
  let outcome = await attempt(source.primary);
  if (outcome.kind === "failed" && source.mirror) {
    failures.push(outcome.reason);
    servedBy = describeLocation(source.mirror);
    outcome = await attempt(source.mirror);
  }
  if (outcome.kind === "failed") {
    failures.push(outcome.reason);
    if (usable) {
      return fromCache(usable, "cache", [
        `${failures.join("; ")}: using the cached catalog fetched at ${usable.meta.fetched_at}`,
      ]);
    }
    throw new CatalogUnavailableError(
      `no MCP catalog: ${failures.join("; ")}, and nothing is cached yet ` +
        "(check the URL and your network, or point SERVICE_MCP_CATALOG_URL at a local copy)",
    );
  }
  if (outcome.kind === "not_modified") {
    if (!usable) throw new CatalogUnavailableError(`${servedBy} answered 304 to a first request`);
    const meta = { ...usable.meta, checked_at: now(), rejected: undefined };
    await writeCache(options.cacheDir, files, meta);
    return fromCache({ ...usable, meta }, "revalidated");
  }
  const check = checkCatalogBytes(outcome.bytes);
  if (!check.ok) {
    if (usable) {
      const meta: CacheMeta = {
        ...usable.meta,
        checked_at: now(),
        rejected: {
          at: new Date(now()).toISOString(),
          mtime_ms: outcome.mtimeMs,
          violations: check.violations,
        },
      };
      await writeCache(options.cacheDir, files, meta);
    }
    throw new CatalogRejectedError(
      servedBy,
      check.violations,
      usable
        ? `the cached copy fetched at ${usable.meta.fetched_at} is kept and used meanwhile`
        : "no earlier copy is cached",
    );
  }
  const meta: CacheMeta = {
    source: sourceName,
    served_by: servedBy,
    etag: outcome.etag,
    fetched_at: new Date(now()).toISOString(),
    checked_at: now(),
    mtime_ms: outcome.mtimeMs,
  };
  await writeCache(options.cacheDir, files, meta, outcome.bytes);
  return {
    catalog: check.catalog,
    raw: check.raw,
    servedBy,
    how: source.primary.kind === "file" && servedBy === sourceName ? "file" : "downloaded",
    fetchedAt: meta.fetched_at,
    warnings: failures.length > 0 ? [`${failures.join("; ")}: used the mirror ${servedBy}`] : [],
  };
}
