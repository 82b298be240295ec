/** Request bodies: bounded size, JSON only, clear errors. */
import type { Context } from "hono";
import { HttpError } from "./errors.ts";

/** Largest JSON body accepted by default. */
const MAX_JSON_BODY = 1 << 20;

/** Parse the body as JSON (400 `invalid_json` when it is not; 413 when too large). */
export async function readJsonBody(c: Context, maxBytes = MAX_JSON_BODY): Promise<unknown> {
  const length = Number(c.req.header("content-length") ?? "0");
  if (length > maxBytes) {
    throw new HttpError(413, "body_too_large", `request body over ${maxBytes} bytes`);
  }
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.length > maxBytes) {
    throw new HttpError(413, "body_too_large", `request body over ${maxBytes} bytes`);
  }
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, "invalid_json", `request body is not JSON: ${(e as Error).message}`);
  }
}

/** Parse an optional JSON object body: empty means `{}`; anything but an object is 400. */
export async function readOptionalJsonObject(
  c: Context,
  maxBytes = MAX_JSON_BODY,
): Promise<Record<string, unknown>> {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.length > maxBytes) {
    throw new HttpError(413, "body_too_large", `request body over ${maxBytes} bytes`);
  }
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, "invalid_json", `request body is not JSON: ${(e as Error).message}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new HttpError(400, "invalid_body", "request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}
