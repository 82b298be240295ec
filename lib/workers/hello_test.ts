import assert from "node:assert/strict";
import { helloAnswer, helloProblem } from "./hello.ts";

const NONCE = "ab".repeat(16);

Deno.test("helloProblem(): a server proves it knows the worker's token and serves its repository, or the worker does not join", () => {
  const good = helloAnswer(NONCE, ["other", "mine"], "root1");
  const cases: [unknown, { token?: string; rootCommits?: string }, RegExp | undefined][] = [
    [good, { token: "mine", rootCommits: "root1" }, undefined],
    [good, { rootCommits: "root1" }, undefined],
    [
      helloAnswer(NONCE, ["other"], "root1"),
      { token: "mine" },
      /does not know this worker's token/,
    ],
    [good, { token: "mine", rootCommits: "root2" }, /serves another repository/],
    [helloAnswer(NONCE, [], undefined), { rootCommits: "root1" }, undefined],
    [{ message: "Not Found" }, {}, /did not answer as a service orchestrator does/],
    [null, {}, /did not answer/],
    // An answer for another nonce (a replay) proves nothing.
    [helloAnswer("cd".repeat(16), ["mine"], "root1"), { token: "mine" }, /does not know/],
  ];
  for (const [answer, mine, want] of cases) {
    const got = helloProblem(answer, NONCE, mine);
    if (want) assert.match(got ?? "", want);
    else assert.equal(got, undefined);
  }
});

Deno.test("helloAnswer() holds only HMACs: no token, no commit in its bytes", () => {
  const text = JSON.stringify(helloAnswer(NONCE, ["secret-token"], "deadbeef"));
  assert.doesNotMatch(text, /secret-token|deadbeef/);
});
