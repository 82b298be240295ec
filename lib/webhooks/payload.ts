/**
 * The JSON payload of a signed webhook body (pure). GitHub sends a webhook whose content type was
 * left at its default, `application/x-www-form-urlencoded`, as a form whose `payload` field holds
 * the JSON; every other delivery is the JSON itself. The signature covers the raw body either way,
 * so this runs only after it was checked.
 */

/** A body that holds no JSON payload; `message` says what was wrong and how to fix it. */
export class PayloadError extends Error {
  override name = "PayloadError";
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Whether `contentType` names an HTML form (`application/x-www-form-urlencoded`, any params). */
function isForm(contentType: string | null): boolean {
  return contentType?.split(";")[0].trim().toLowerCase() === "application/x-www-form-urlencoded";
}

/** The payload of `bytes` sent with `contentType`; throws {@link PayloadError}. */
export function webhookPayload(bytes: Uint8Array, contentType: string | null): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch (e) {
    throw new PayloadError(`signed body is not UTF-8 JSON: ${(e as Error).message}`);
  }
  if (isForm(contentType)) {
    const payload = new URLSearchParams(text).get("payload");
    if (payload === null) {
      throw new PayloadError(
        "signed form body has no `payload` field: send the JSON payload as the body " +
          "(content type application/json) or as the form's `payload` field",
      );
    }
    text = payload;
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    const what = isForm(contentType) ? "the `payload` field of the signed form" : "signed body";
    throw new PayloadError(`${what} is not UTF-8 JSON: ${(e as Error).message}`);
  }
}
