/**
 * GET /dashboard/review-board — the board page (spec §4). It carries no data, so it loads
 * without a token; the page fetches everything from the JSON API with the operator's token.
 */
import type { Ctx } from "../../lib/http/context.ts";
import { boardBundle, bundleUrl } from "../../lib/static/board_bundle.ts";
import { renderBoardPage } from "../../components/board_page.tsx";
import { routePolicy } from "../../lib/http/route_policy.ts";

/**
 * Who may call it: anyone; the page carries no data (its islands fetch the JSON API with the
 * operator's token).
 */
export const policy = routePolicy({ GET: "public" }, { trailingSlash: true });

/** Content-Security-Policy of the page: nothing but this origin, no inline scripts. */
export const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; " +
  "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; " +
  "frame-ancestors 'none'";

/** Render the page shell linking the content-hashed islands bundle. */
export async function GET(c: Ctx): Promise<Response> {
  const html = renderBoardPage({ bundleUrl: bundleUrl(await boardBundle()) });
  c.header("Content-Security-Policy", PAGE_CSP);
  c.header("Cache-Control", "no-cache");
  c.header("X-Content-Type-Options", "nosniff");
  // A page that opened the board (window.open) keeps no handle on it, and the board's links to
  // pull requests and trackers do not tell those hosts the board's address.
  c.header("Cross-Origin-Opener-Policy", "same-origin");
  c.header("Referrer-Policy", "no-referrer");
  return c.html(html);
}
