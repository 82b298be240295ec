/**
 * How the fake code hosts answer (github_api.ts, gitlab_api.ts): JSON with the host's own
 * headers, and conditional GETs as the hosts do them: a 200 carries an `ETag` (GitLab's weak),
 * and the same GET with `If-None-Match` is a 304 with no body.
 */

/** A JSON answer to `req` (`headers` are the host's, e.g. its rate-limit headers). */
export function hostAnswer(
  req: Request,
  status: number,
  body: unknown,
  headers: Record<string, string>,
  weakEtag = false,
): Response {
  const text = JSON.stringify(body);
  const etag = `${weakEtag ? "W/" : ""}"${text.length}-${fnv1a(text)}"`;
  const conditional = req.method === "GET" && status === 200;
  const h = { ...headers, ...(conditional ? { etag } : {}) };
  if (conditional && req.headers.get("if-none-match") === etag) {
    return new Response(null, { status: 304, headers: h });
  }
  return new Response(status === 204 ? null : text, { status, headers: h });
}

/** A short digest (FNV-1a). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}
