/**
 * GET /static/<file> — the islands bundle under its content-hashed name. The name changes
 * whenever the bytes do, so browsers may keep it for a year without asking again.
 */
import type { Ctx } from "../../lib/http/context.ts";
import { HttpError } from "../../lib/http/errors.ts";
import { boardBundle } from "../../lib/static/board_bundle.ts";
import { routePolicy } from "../../lib/http/route_policy.ts";

/**
 * Who may call it: anyone; the content-hashed bundle carries no data, and browsers fetch module
 * scripts with an `Origin`.
 */
export const policy = routePolicy({ GET: "public" }, { anyOrigin: true });

/** Serve the bundle when `file` is its current name; 404 otherwise. */
export async function GET(c: Ctx): Promise<Response> {
  const file = c.req.param("file");
  const bundle = await boardBundle();
  if (file !== bundle.fileName) {
    throw new HttpError(
      404,
      "not_found",
      `no static file ${JSON.stringify(file)}; the current bundle is ${bundle.fileName}`,
    );
  }
  return new Response(bundle.bytes.slice(), {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "etag": `"${bundle.fileName}"`,
      "x-content-type-options": "nosniff",
    },
  });
}
