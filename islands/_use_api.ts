/** A hook that GETs one API path and re-fetches when `key` changes (browser-side helper). */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, apiFetch } from "../lib/dashboard/api.ts";
import { holdLoadEvent } from "../lib/dashboard/load_hold.ts";

/** Where a fetch stands. */
export type ApiState<T> =
  | { status: "loading" }
  | { status: "ok"; value: T }
  | { status: "error"; error: ApiError };

/**
 * GET `path` (with `token`) whenever `path`, `token` or `key` change. While the page is still
 * loading, its `load` waits until the answer is on screen (headless screenshots wait for it).
 */
export function useApi<T>(path: string, token: string, key: string): ApiState<T> {
  const [state, setState] = useState<ApiState<T>>({ status: "loading" });
  const release = useRef(() => {});
  useEffect(() => {
    let live = true;
    release.current = holdLoadEvent();
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
      release.current();
    };
  }, [path, token, key]);
  // Effects run once the render is committed: the answer is in the document.
  useEffect(() => {
    if (state.status !== "loading") release.current();
  }, [state]);
  return state;
}
