import assert from "node:assert/strict";
import { findWorkspaceRoot, type WorkspaceRootProbe } from "./workspace_root.ts";

/** A machine with the repository at `top` (none: not in git) and these files. */
function probe(top: string | undefined, files: string[]): WorkspaceRootProbe {
  return {
    topLevel: () => Promise.resolve(top),
    exists: (path) => Promise.resolve(files.includes(path)),
  };
}

Deno.test("findWorkspaceRoot() finds the workspace from a subdirectory as git finds the repository", async () => {
  const cases: [string, string | undefined, string[], string, string][] = [
    ["the repository's root", "/r", ["/r/service.yaml"], "/r", "/r"],
    ["a subdirectory", "/r", ["/r/service.yaml"], "/r/src/lib", "/r"],
    ["a subdirectory, no service.yaml anywhere", "/r", [], "/r/src", "/r"],
    [
      "a nested workspace with its own service.yaml",
      "/r",
      ["/r/service.yaml", "/r/app/service.yaml"],
      "/r/app/src",
      "/r/app",
    ],
    ["a service.yaml above the repository is not taken", "/r", ["/service.yaml"], "/r/src", "/r"],
    ["outside any repository", undefined, ["/service.yaml"], "/tmp/x", "/tmp/x"],
  ];
  for (const [what, top, files, cwd, expected] of cases) {
    assert.equal(await findWorkspaceRoot(cwd, probe(top, files)), expected, what);
  }
});
