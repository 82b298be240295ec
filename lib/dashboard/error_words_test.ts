import assert from "node:assert/strict";
import { plainWords } from "./error_words.ts";

Deno.test("plainWords() explains 401, 403, 409 and 412 without jargon", () => {
  const words = (status: number) => plainWords({ status, code: "x", message: "m" });
  assert.match(words(401), /bearer token/);
  assert.match(words(403), /operator scope/);
  assert.match(words(409), /nothing was written/);
  assert.match(words(412), /board changed since you loaded it/);
  assert.match(words(0), /Cannot reach the server/);
});
