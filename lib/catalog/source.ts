/**
 * Where the catalog comes from: `SERVICE_MCP_CATALOG_URL` or `mcp_catalog.url` — an https URL or
 * a local path — with an optional mirror and public key. Pure.
 */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServiceConfig } from "../config/schema.ts";
import type { EnvLookup } from "./user_paths.ts";

/** A catalog location: a URL fetched over HTTP(S), or a file on this machine. */
export type CatalogLocation = { kind: "http"; url: string } | { kind: "file"; path: string };

/** The configured catalog source. */
export interface CatalogSource {
  primary: CatalogLocation;
  mirror?: CatalogLocation;
  /** Ed25519 public key (base64 of the 32 raw bytes) for the best-effort signature check. */
  publicKey?: string;
  /** Where the setting came from, for messages. */
  origin: "SERVICE_MCP_CATALOG_URL" | "mcp_catalog.url";
}

/** A catalog setting that cannot be used; the message names the setting and the fix. */
export class CatalogSourceError extends Error {
  /** Machine-readable kind of failure. */
  readonly code = "catalog_source";
  constructor(message: string) {
    super(message);
    this.name = "CatalogSourceError";
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Why the catalog may not be fetched from `url`, or undefined when it may: https anywhere, plain
 * http only for loopback hosts (local mirrors, tests). Every redirect hop is held to it too. Pure.
 */
export function httpUrlProblem(url: URL): string | undefined {
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") {
    return LOOPBACK.has(url.hostname) ? undefined : "uses plain http: use an https URL " +
      "(plain http is allowed only for 127.0.0.1/localhost)";
  }
  return `is not an http(s) URL`;
}

/** Parse one location; plain http is accepted for loopback hosts only (local mirrors, tests). */
function parseLocation(value: string, setting: string, root: string): CatalogLocation {
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new CatalogSourceError(`${setting}: ${value} is not a valid URL`);
    }
    const problem = httpUrlProblem(url);
    if (problem) throw new CatalogSourceError(`${setting}: ${value} ${problem}`);
    return { kind: "http", url: url.href };
  }
  if (/^file:\/\//i.test(value)) return { kind: "file", path: fileURLToPath(value) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new CatalogSourceError(
      `${setting}: ${value}: only https URLs and local paths are supported`,
    );
  }
  return { kind: "file", path: isAbsolute(value) ? value : resolve(root, value) };
}

/** A location as the user would write it. */
export function describeLocation(location: CatalogLocation): string {
  return location.kind === "http" ? location.url : location.path;
}

/**
 * The catalog source: `SERVICE_MCP_CATALOG_URL` wins over `mcp_catalog.url`; the mirror and the
 * key come from `mcp_catalog` (or `SERVICE_MCP_CATALOG_MIRROR_URL` / `SERVICE_MCP_CATALOG_PUBLIC_KEY`).
 */
export function catalogSource(
  config: ServiceConfig | undefined,
  env: EnvLookup,
  root: string,
): CatalogSource {
  const fromEnv = env("SERVICE_MCP_CATALOG_URL");
  const url = fromEnv || config?.mcp_catalog?.url;
  if (!url) {
    throw new CatalogSourceError(
      "no MCP catalog configured: set SERVICE_MCP_CATALOG_URL, or add to service.yaml:\n" +
        "    mcp_catalog:\n      url: https://example.com/mcp-catalog.json",
    );
  }
  const origin = fromEnv ? "SERVICE_MCP_CATALOG_URL" : "mcp_catalog.url";
  const mirrorUrl = env("SERVICE_MCP_CATALOG_MIRROR_URL") || config?.mcp_catalog?.mirror_url;
  return {
    primary: parseLocation(url, origin, root),
    mirror: mirrorUrl ? parseLocation(mirrorUrl, "mcp_catalog.mirror_url", root) : undefined,
    publicKey: env("SERVICE_MCP_CATALOG_PUBLIC_KEY") || config?.mcp_catalog?.public_key,
    origin,
  };
}
