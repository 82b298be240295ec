/**
 * Where a module named in `service.yaml` (`trackers.<name>.module`, `adapters.<name>.module`) is
 * imported from: an `npm:`, `jsr:`, `http(s):` or `file:` specifier as written, else a path,
 * relative to the workspace when not absolute. Pure.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** The import URL of `specifier` for the workspace at `root`. */
export function userModuleUrl(specifier: string, root: string): string {
  return /^(npm|jsr|https?|file):/.test(specifier)
    ? specifier
    : pathToFileURL(isAbsolute(specifier) ? specifier : resolve(root, specifier)).href;
}
