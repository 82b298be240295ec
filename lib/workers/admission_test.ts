import assert from "node:assert/strict";
import { admitWorker, workersConfigured } from "./admission.ts";
import type { TokenSpec } from "../auth/tokens.ts";
import { DomainError } from "../errors.ts";

const op: TokenSpec = { principal: "ops", scope: "operator", token_env: "OPS" };
const reader: TokenSpec = { principal: "r", scope: "reader", token_env: "R" };
const box: TokenSpec = { principal: "box", scope: "worker", token_env: "BOX" };

Deno.test("workersConfigured() is true only when a token of scope worker is configured", () => {
  const cases: [TokenSpec[], boolean][] = [
    [[], false],
    [[op], false],
    [[reader, op], false],
    [[box], true],
    [[op, box], true],
  ];
  for (const [specs, expected] of cases) {
    assert.equal(workersConfigured(specs), expected, JSON.stringify(specs));
  }
});

Deno.test("admitWorker() refuses every worker of a server without a worker token, even as the local operator", () => {
  const server = { tokenSpecs: () => [] };
  assert.throws(
    () => admitWorker(server),
    (e) =>
      e instanceof DomainError && e.kind === "forbidden" && e.code === "workers_not_configured",
  );
  const configured = { tokenSpecs: () => [box] };
  admitWorker(configured);
});
