import assert from "node:assert/strict";
import { startFailure } from "./start_failure.ts";

const e2big = Object.assign(new Error("Failed to spawn 'x': Argument list too long (os error 7)"), {
  code: "E2BIG",
});
const template = Object.assign(new Error("no such template"), { name: "TemplateError" });

Deno.test("startFailure() retries only what another attempt could start", () => {
  const cases: [Error, boolean, RegExp][] = [
    [e2big, false, /command line is longer than .* shorten the task's goal/],
    [new Deno.errors.NotFound("no agent"), false, /^could not start the agent: no agent$/],
    [new Deno.errors.PermissionDenied("denied"), false, /denied/],
    [template, false, /no such template/],
    [new Error("resource busy"), true, /^could not start the agent: resource busy$/],
  ];
  for (const [err, retryable, reason] of cases) {
    const got = startFailure(err);
    assert.equal(got.retryable, retryable, err.message);
    assert.match(got.reason, reason);
  }
});
