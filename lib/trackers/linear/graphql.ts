/** Linear's one GraphQL endpoint, as tracker_d calls it. */
import { type ApiAccess, apiClient } from "../adapter.ts";
import { HttpApiError } from "../../http/api_error.ts";
import type { RateLimit } from "../../http/rate_limit.ts";
import { arr, obj, str } from "../../util/json_fields.ts";

function headersOf(access: ApiAccess): HeadersInit {
  return { authorization: access.token };
}

/** Run a GraphQL operation; GraphQL errors (RATELIMITED included) become {@link HttpApiError}s. */
export async function graphql(
  access: ApiAccess,
  query: string,
  variables: Record<string, unknown>,
): Promise<{ rate: RateLimit; data: Record<string, unknown> }> {
  const http = apiClient(access, "Linear");
  let answer;
  try {
    answer = await http.request(access.apiUrl, {
      method: "POST",
      headers: headersOf(access),
      json: { query, variables },
    });
  } catch (e) {
    // Linear answers a rate limit with HTTP 400 and extensions.code RATELIMITED.
    if (e instanceof HttpApiError && /RATELIMITED/.test(e.body)) {
      throw new HttpApiError(e.message, { ...e, status: 429, code: "RATELIMITED", cause: e });
    }
    throw e;
  }
  const body = obj(answer.json());
  const errors = arr(body.errors);
  if (errors.length > 0) {
    const first = obj(errors[0]);
    const code = str(obj(first.extensions).code);
    throw new HttpApiError(`Linear GraphQL: ${str(first.message) || code}`, {
      status: code === "RATELIMITED" ? 429 : 400,
      ...(code ? { code } : {}),
      method: "POST",
      url: access.apiUrl,
      apiMessage: str(first.message),
      rate: answer.rate,
    });
  }
  return { rate: answer.rate, data: obj(body.data) };
}
