/**
 * Request bodies: bounded size (also enforced while reading, lib/http/body_limit.ts), strict
 * JSON (valid UTF-8, no repeated keys: lib/http/strict_json.ts), clear errors.
 */
import type { Context } from "hono";
import { HttpError } from "./errors.ts";
import { bodyTooLarge, MAX_JSON_BODY } from "./body_limit.ts";
import { parseStrictJson } from "./strict_json.ts";

export { MAX_JSON_BODY };

async function bodyBytes(c: Context, maxBytes: number): Promise<Uint8Array> {
  const length = Number(c.req.header("content-length") ?? "0");
  if (length > maxBytes) throw bodyTooLarge(maxBytes);
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.length > maxBytes) throw bodyTooLarge(maxBytes);
  return bytes;
}

function strict(bytes: Uint8Array): unknown {
  const parsed = parseStrictJson(bytes);
  if (!parsed.ok) throw new HttpError(400, parsed.error.code, parsed.error.message);
  return parsed.value;
}

/** Parse the body as strict JSON (400 `invalid_json`, `invalid_utf8`, `duplicate_key`; 413). */
export async function readJsonBody(c: Context, maxBytes = MAX_JSON_BODY): Promise<unknown> {
  return strict(await bodyBytes(c, maxBytes));
}

/** Parse an optional JSON object body: empty means `{}`; anything but an object is 400. */
export async function readOptionalJsonObject(
  c: Context,
  maxBytes = MAX_JSON_BODY,
): Promise<Record<string, unknown>> {
  const bytes = await bodyBytes(c, maxBytes);
  if (new TextDecoder().decode(bytes).trim() === "") return {};
  const value = strict(bytes);
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new HttpError(400, "invalid_body", "request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}
