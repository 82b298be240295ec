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
 * loading, its `load` waits until the first answer is on screen (headless screenshots wait for it).
 */
export function useApi<T>(path: string, token: string, key: string): ApiState<T> {
  const [state, setState] = useState<ApiState<T>>({ status: "loading" });
  // Taken while rendering, not in an effect: the board app lets its own hold go in an effect,
  // and effects of one commit need not run parents after children.
  const firstAnswer = useRef<(() => void) | undefined>(undefined);
  firstAnswer.current ??= holdLoadEvent();
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
  // Effects run once the render is committed: the answer is in the document.
  useEffect(() => {
    if (state.status !== "loading") firstAnswer.current!();
  }, [state]);
  useEffect(() => () => firstAnswer.current!(), []);
  return state;
}
