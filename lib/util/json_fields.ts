/**
 * Reading fields of JSON someone else wrote (a tracker's webhook, a code host's or provider's
 * answer): anything may be missing or of another type, so each reader returns a value of the type
 * asked for, empty when the field is not one.
 */

/** A string field (a number is written out), or "". */
export function str(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}

/** An object field, or `{}`. */
export function obj(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

/** An array field, or `[]`. */
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
