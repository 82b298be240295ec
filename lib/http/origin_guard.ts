/**
 * Who may talk to the server from a browser (docs/security.md): a loopback server is reachable
 * by every page the operator opens, so
 *
 * - the `Host` must name this server (a loopback name, the bind address, the `public_url` host or
 *   an allowed origin's host): a DNS-rebinding page (`Host: evil.example:8052`) reads nothing;
 * - an `Origin` (or, without one, `Sec-Fetch-Site: cross-site` or `same-site`) must be this
 *   server's own origin or an allowed one: no page elsewhere can write, or read through
 *   CORS-less tricks;
 * - a request that carries a body must say `Content-Type: application/json`, so no "simple"
 *   cross-origin form or `text/plain` fetch is ever parsed as a command.
 *
 * Routes whose policy says `signedDelivery` (the webhook route) are not guarded at all: trackers
 * reach the server through tunnels under their own host name, send their own content types and
 * are authenticated by their signature instead (spec §4.2). Routes that say `anyOrigin` (the
 * content-hashed bundle, which carries no data) skip the `Origin` check only. Routes that say
 * `navigable` (the public board page) may be opened by a top-level navigation from another site,
 * such as the board link in a pull request's body or a tracker's comment: a GET that the linking
 * page can neither read nor use to write.
 */
import type { MiddlewareHandler } from "hono";
import { isLoopbackHost, isWildcardHost } from "../util/loopback.ts";
import { HttpError } from "./errors.ts";

/** The server's own names and the origins it trusts besides itself. */
export interface OriginPolicy {
  /** The address the server is bound to (`127.0.0.1`, `::1`, `0.0.0.0`, a host name). */
  bindHost: string;
  /** The URL operators open behind a reverse proxy (`server.public_url`), if any. */
  publicUrl?: string;
  /** Further browser origins allowed to call the API (`server.allowed_origins`). */
  allowedOrigins?: string[];
  /** Extra host names accepted in `Host` (a wildcard bind adds the machine's addresses). */
  extraHosts?: string[];
}

/** The facts of one request the guard looks at (pure input). */
interface RequestFacts {
  method: string;
  path: string;
  /** The `Host` header (or the URL's host when the client sent none). */
  host: string;
  /** False when the client sent no `Host` (HTTP/1.0; the URL's host is then ours, not its). */
  hostSent?: boolean;
  origin?: string;
  secFetchSite?: string;
  /** `Sec-Fetch-Mode` and `Sec-Fetch-Dest` (`navigate` and `document` for a followed link). */
  secFetchMode?: string;
  secFetchDest?: string;
  contentType?: string;
  /** True when the request carries a body (a non-zero length or a transfer encoding). */
  hasBody: boolean;
}

/** A refusal: status, error code and the words that explain it. */
interface GuardRefusal {
  status: 403 | 415;
  code: "forbidden_host" | "forbidden_origin" | "unsupported_media_type";
  message: string;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The host name of a `Host` header value, lower-cased, without its port (`[::1]` kept bare). */
function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    // `[addr]` or `[addr]:port`; anything else after the bracket (`[::1].evil.example`) is no
    // address, and the whole value stays the name (never a loopback one).
    const end = h.indexOf("]");
    return end > 0 && /^(:\d*)?$/.test(h.slice(end + 1)) ? h.slice(1, end) : h;
  }
  const colon = h.lastIndexOf(":");
  return colon > 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.origin === "null" ? undefined : u.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The host names a policy accepts in `Host` (besides every loopback name). */
function acceptedHostNames(policy: OriginPolicy): Set<string> {
  const names = new Set<string>();
  const bind = hostName(policy.bindHost);
  if (!isWildcardHost(policy.bindHost) && !isWildcardHost(bind)) names.add(bind);
  for (const url of [policy.publicUrl, ...(policy.allowedOrigins ?? [])]) {
    if (!url) continue;
    try {
      names.add(new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, ""));
    } catch { /* validated by the config schema */ }
  }
  for (const h of policy.extraHosts ?? []) names.add(hostName(h));
  return names;
}

/** Options of {@link checkRequest} and {@link originGuard}. */
export interface GuardOptions {
  /** The route's bytes carry no data: any page may load them (the `Origin` check is skipped). */
  anyOrigin?: boolean;
  /** A page that carries no data: a top-level navigation from another site may open it. */
  navigable?: boolean;
  /** {@link acceptedHostNames} of the policy, when already computed. */
  accepted?: Set<string>;
}

/** Decide one request (pure): undefined when it may proceed, else the refusal. */
function checkRequest(
  facts: RequestFacts,
  policy: OriginPolicy,
  options: GuardOptions = {},
): GuardRefusal | undefined {
  const accepted = options.accepted ?? acceptedHostNames(policy);
  const name = hostName(facts.host);
  if (!isLoopbackHost(name) && !accepted.has(name)) {
    return {
      status: 403,
      code: "forbidden_host",
      message: (facts.hostSent !== false
        ? `Host ${JSON.stringify(facts.host)} is not this server's name`
        : "the request has no Host header") +
        ": only loopback " +
        `names, the bind address${policy.publicUrl ? ", the public_url host" : ""} and the ` +
        "hosts of server.allowed_origins are answered (DNS-rebinding defence). Open the board " +
        "at http://127.0.0.1:<port>/dashboard/review-board, or set server.public_url in " +
        "service.yaml when a reverse proxy serves it under another name.",
    };
  }
  // Browsers fetch module scripts with an Origin; refusing the data-free bundle would leave a
  // misconfigured proxy's page blank instead of explaining itself.
  if (options.anyOrigin && SAFE_METHODS.has(facts.method)) return undefined;
  const trusted = trustedOrigins(facts.host, policy);
  if (facts.origin !== undefined) {
    const origin = originOf(facts.origin);
    if (!origin || !trusted.has(origin)) {
      return {
        status: 403,
        code: "forbidden_origin",
        message:
          `cross-origin request from ${
            JSON.stringify(facts.origin)
          } refused: only pages served by this server` +
          " (or listed in server.allowed_origins in service.yaml) may call its API",
      };
    }
  } else if (
    (facts.secFetchSite === "cross-site" || facts.secFetchSite === "same-site") &&
    !(options.navigable && isTopLevelNavigation(facts))
  ) {
    // `same-site`: a page on another port of this host (another local server's page) loading
    // this one's data as a script, image or no-cors fetch; the browser would hide the answer,
    // but it is not sent at all (nor an event stream held open for it).
    return {
      status: 403,
      code: "forbidden_origin",
      message: `${facts.secFetchSite} request refused (Sec-Fetch-Site: ${facts.secFetchSite}) ` +
        "and no Origin to allow: only pages served by this server may load its data",
    };
  }
  if (!SAFE_METHODS.has(facts.method) && facts.hasBody && !isJson(facts.contentType)) {
    return {
      status: 415,
      code: "unsupported_media_type",
      message: `${facts.method} ${facts.path} takes a JSON body: send ` +
        `\`Content-Type: application/json\` (got ${
          facts.contentType ? JSON.stringify(facts.contentType) : "none"
        })`,
    };
  }
  return undefined;
}

/** The origins that count as this server: its own (as the browser reached it) and the allowed. */
function trustedOrigins(host: string, policy: OriginPolicy): Set<string> {
  const out = new Set<string>();
  const h = host.trim().toLowerCase();
  out.add(`http://${h}`);
  out.add(`https://${h}`);
  for (const url of [policy.publicUrl, ...(policy.allowedOrigins ?? [])]) {
    const origin = url ? originOf(url) : undefined;
    if (origin) out.add(origin);
  }
  return out;
}

/** A followed link or typed address opening a page in a tab (never a frame, fetch or form POST). */
function isTopLevelNavigation(facts: RequestFacts): boolean {
  return SAFE_METHODS.has(facts.method) && facts.secFetchMode === "navigate" &&
    facts.secFetchDest === "document";
}

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const essence = contentType.split(";")[0].trim().toLowerCase();
  return essence === "application/json";
}

/** The facts {@link checkRequest} needs, read from a request. */
function requestFacts(req: Request, path: string): RequestFacts {
  const headers = req.headers;
  const length = headers.get("content-length");
  return {
    method: req.method.toUpperCase(),
    path,
    host: headers.get("host") ?? new URL(req.url).host,
    hostSent: headers.has("host"),
    origin: headers.get("origin") ?? undefined,
    secFetchSite: headers.get("sec-fetch-site")?.toLowerCase(),
    secFetchMode: headers.get("sec-fetch-mode")?.toLowerCase(),
    secFetchDest: headers.get("sec-fetch-dest")?.toLowerCase(),
    contentType: headers.get("content-type") ?? undefined,
    hasBody: headers.has("transfer-encoding") || (length !== null && length.trim() !== "0"),
  };
}

/** Hono middleware refusing foreign hosts, foreign origins and non-JSON bodies (403/415). */
export function originGuard(policy: OriginPolicy, options: GuardOptions = {}): MiddlewareHandler {
  const guard = { ...options, accepted: options.accepted ?? acceptedHostNames(policy) };
  return async function originGuardMiddleware(c, next) {
    const refusal = checkRequest(requestFacts(c.req.raw, c.req.path), policy, guard);
    if (refusal) throw new HttpError(refusal.status, refusal.code, refusal.message);
    await next();
  };
}
