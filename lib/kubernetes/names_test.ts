import assert from "node:assert/strict";
import { isJobName, isLabelValue, jobName, labelValue, runSelector } from "./names.ts";

Deno.test("labelValue() keeps valid ids and digests those the API server would refuse", () => {
  const table: [string, boolean][] = [
    ["t1", true],
    ["r-20260101-ab12", true],
    ["Task_9.b", true],
    ["a".repeat(63), true],
    ["a".repeat(64), false], // too long
    ["ends-with-dot.", false],
    ["-starts-with-dash", false],
    ["_under", false],
  ];
  for (const [id, kept] of table) {
    const v = labelValue(id);
    assert.ok(isLabelValue(v), `${id} → ${v} is a label value`);
    assert.equal(v === id, kept, id);
  }
  assert.notEqual(labelValue("a".repeat(64)), labelValue("a".repeat(65)), "digests differ");
});

Deno.test("jobName() is a DNS-1123 label of at most 53 characters for any task id", () => {
  const hostile = [
    "t1",
    "T_1.x",
    "a".repeat(128),
    "9",
    "...",
    "Ünïcode".normalize(),
    "UPPER-and-lower_and.dots",
  ];
  for (const id of hostile) {
    const name = jobName(id, "s-abcd-001-ffff");
    assert.ok(isJobName(name), `${JSON.stringify(id)} → ${name}`);
    assert.ok(name.length <= 53, name);
  }
  assert.notEqual(jobName("t1", "s1"), jobName("t1", "s2"), "one Job per session");
  assert.equal(jobName("t1", "s1"), jobName("t1", "s1"), "the same session: the same name");
});

Deno.test("isJobName() refuses what the API server refuses", () => {
  for (const bad of ["", "Upper", "a_b", "a.b", "-a", "a-", "a".repeat(64)]) {
    assert.equal(isJobName(bad), false, bad);
  }
  assert.equal(runSelector("r1"), "service.run=r1");
});
