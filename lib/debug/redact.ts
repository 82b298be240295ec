/** Redaction of secrets in diagnostic output (pure). */

/** Keys whose values are secrets. */
const SECRET_KEY = /(secret|token|password|passwd|api[_-]?key|private[_-]?key|credential|auth)/i;
/** Keys that hold the *name* of a variable, not its value: kept. */
const NAME_KEY = /(_env|_name)$/i;

/** Value-shaped secrets (provider keys, bearer tokens, hex keys). */
const SECRET_VALUE = [
  /\b(sk|pk|rk)-[A-Za-z0-9_-]{12,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abpr]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b[0-9a-f]{40,}\b/gi,
];

/** The mask written in place of a secret. */
export const MASK = "***redacted***";

/** A deep copy of `value` with values under secret-looking keys masked. */
export function redactObject(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => redactObject(v, key));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactObject(v, k)]));
  }
  if (typeof value === "string" && SECRET_KEY.test(key) && !NAME_KEY.test(key)) return MASK;
  return typeof value === "string" ? redactText(value) : value;
}

/** `text` with secret-shaped values and the given known secret values masked. */
export function redactText(text: string, known: string[] = []): string {
  let out = text;
  for (const secret of known) if (secret.length >= 6) out = out.split(secret).join(MASK);
  for (const re of SECRET_VALUE) {
    out = out.replace(
      re,
      (
        _m,
        prefix,
      ) => (typeof prefix === "string" && /bearer/i.test(prefix) ? `${prefix}${MASK}` : MASK),
    );
  }
  return out;
}

/** Values of environment variables whose names look secret (to mask wherever they appear). */
export function secretEnvValues(env: Record<string, string>): string[] {
  return Object.entries(env).filter(([k]) => SECRET_KEY.test(k)).map(([, v]) => v).filter(Boolean);
}
