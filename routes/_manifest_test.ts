/** The checked-in route manifest matches the files under routes/, and lib/ stays below them. */
import assert from "node:assert/strict";
import { expectedManifest } from "../scripts/gen_routes.ts";
import { urlPathOf } from "../lib/http/route_manifest.ts";
import { ROUTES } from "./_manifest.gen.ts";

Deno.test("routes/_manifest.gen.ts is up to date (else run `deno task routes`)", async () => {
  const current = await Deno.readTextFile(new URL("./_manifest.gen.ts", import.meta.url));
  assert.equal(current, await expectedManifest(), "stale manifest: run `deno task routes`");
});

Deno.test("every route module exports at least one method handler", () => {
  for (const route of ROUTES) {
    const methods = Object.keys(route.module).filter((k) =>
      /^(GET|POST|PUT|PATCH|DELETE)$/.test(k)
    );
    assert.ok(methods.length > 0, `${route.path} exports no GET/POST/… handler`);
  }
  assert.equal(
    urlPathOf("review-board/runs/[run_id]/diff/[task_id].ts"),
    "/review-board/runs/:run_id/diff/:task_id",
  );
});

Deno.test("lib/ never imports routes/, components/ or islands/", async () => {
  const offenders: string[] = [];
  const walk = async (dir: URL) => {
    for await (const e of Deno.readDir(dir)) {
      const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
      if (e.isDirectory) await walk(url);
      else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) {
        const text = await Deno.readTextFile(url);
        for (const m of text.matchAll(/from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)) {
          const spec = m[1] ?? m[2];
          if (!spec.startsWith(".")) continue;
          const target = new URL(spec, url).pathname;
          if (/\/(routes|components|islands)\//.test(target.slice(root.length - 1))) {
            offenders.push(`${url.pathname.slice(root.length)} imports ${spec}`);
          }
        }
      }
    }
  };
  const root = new URL("../", import.meta.url).pathname;
  await walk(new URL("../lib/", import.meta.url));
  assert.deepEqual(offenders, []);
});
