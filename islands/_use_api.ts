/** A hook that GETs one API path and re-fetches when `key` changes (browser-side helper). */
import { useEffect, useState } from "preact/hooks";
import { ApiError, apiFetch } from "../lib/dashboard/api.ts";

/** Where a fetch stands. */
export type ApiState<T> =
  | { status: "loading" }
  | { status: "ok"; value: T }
  | { status: "error"; error: ApiError };

/** GET `path` (with `token`) whenever `path`, `token` or `key` change. */
export function useApi<T>(path: string, token: string, key: string): ApiState<T> {
  const [state, setState] = useState<ApiState<T>>({ status: "loading" });
  useEffect(() => {
    let live = true;
    setState({ status: "loading" });
    apiFetch<T>(path, { token }).then(
      (value) => live && setState({ status: "ok", value }),
      (error) =>
        live &&
        setState({
          status: "error",
          error: error instanceof ApiError ? error : new ApiError(0, "error", String(error)),
        }),
    );
    return () => {
      live = false;
    };
  }, [path, token, key]);
  return state;
}
