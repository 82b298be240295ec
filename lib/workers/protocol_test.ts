import assert from "node:assert/strict";
import { HeartbeatBodySchema, RegisterBodySchema, ReportBodySchema } from "./protocol.ts";

const report = (task_id: string, session_id: string) => ({
  task_id,
  session_id,
  exit_code: 0,
  duration_ms: 1,
  commit: null,
});

Deno.test("the worker protocol takes only ids of the one id rule (lib/ids.ts): task, session and role names", () => {
  const hostile = ["a..b", "../x", "", "a/b", ".x", "-x", "a b", "a\nb", "a".repeat(129), "é"];
  for (const id of hostile) {
    assert.equal(ReportBodySchema.safeParse(report(id, "s-1")).success, false, `task ${id}`);
    assert.equal(ReportBodySchema.safeParse(report("t-1", id)).success, false, `session ${id}`);
    assert.equal(
      HeartbeatBodySchema.safeParse({ task_id: id }).success,
      false,
      `heartbeat of ${id}`,
    );
    assert.equal(RegisterBodySchema.safeParse({ slots: 1, roles: [id] }).success, false, id);
  }
  assert.ok(ReportBodySchema.safeParse(report("t-1.a_b", "s-" + "x".repeat(126))).success);
  const refused = ReportBodySchema.safeParse(report("a..b", "s"));
  assert.match(refused.error!.issues[0].message, /no '\.\.'/);
});
