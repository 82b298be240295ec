import assert from "node:assert/strict";
import { adapterByName } from "../agents/adapters/mod.ts";
import { loadRoleTemplate } from "../roles/templates.ts";
import { newTask, TaskInputSchema } from "../tasks/task.ts";
import { agentInvocation, EARLIER_WORK, PREVIOUS_ATTEMPT } from "./invocation.ts";

const template = await loadRoleTemplate("/nonexistent-workspace", "backend");
const task = (complexity: "low" | "medium") =>
  newTask(
    {
      ...TaskInputSchema.parse({
        title: "Parse CSV",
        role: "backend",
        goal: "Write the parser",
        complexity,
      }),
      id: "t1",
    },
    { status: "OPEN", seq: 0, now: "2026-11-21T10:00:00.000Z" },
  );

Deno.test("agentInvocation(): the prompt carries the goal, the reporting instructions and the previous attempt's note", () => {
  const inv = agentInvocation(adapterByName("claude"), template, task("medium"), {
    workdir: "/w",
    retryNote: "an operator requested changes: add tests",
  });
  assert.match(inv.prompt, /Write the parser/);
  assert.match(inv.prompt, /\/tasks\/\$SERVICE_TASK_ID\/complete/);
  assert.ok(inv.prompt.endsWith(`${PREVIOUS_ATTEMPT} an operator requested changes: add tests\n`));
  assert.equal(inv.argv.at(-1), inv.prompt);
});

Deno.test("agentInvocation(): `model` wins; complexity low routes to the adapter's cheapest model; else the CLI default", () => {
  const claude = adapterByName("claude");
  assert.equal(
    agentInvocation(claude, template, task("low"), { workdir: "/w", model: "opus" }).model,
    "opus",
  );
  assert.equal(
    agentInvocation(claude, template, task("low"), { workdir: "/w" }).model,
    claude.cheapestModel,
  );
  const medium = agentInvocation(claude, template, task("medium"), { workdir: "/w" });
  assert.equal(medium.model, undefined);
  assert.ok(!medium.argv.includes("--model"));
});

Deno.test("agentInvocation(): a worktree that continues interrupted work says so in the prompt, with how to see it", () => {
  const base = "0123456789abcdef0123456789abcdef01234567";
  const inv = agentInvocation(adapterByName("claude"), template, task("medium"), {
    workdir: "/w",
    earlierWork: { session: "s-run1-001-abcd", base },
  });
  assert.match(inv.prompt, new RegExp(`${EARLIER_WORK} an earlier attempt .*s-run1-001-abcd`));
  assert.match(inv.prompt, /already in your worktree, committed on your branch/);
  assert.match(inv.prompt, /`git diff 0123456789ab` shows everything it changed/);
  const fresh = agentInvocation(adapterByName("claude"), template, task("medium"), {
    workdir: "/w",
  });
  assert.ok(!fresh.prompt.includes(EARLIER_WORK));
});

Deno.test("agentInvocation(): an agent with leased ports is told to serve on $PORT, not the project's default; without ports nothing is said", () => {
  const claude = adapterByName("claude");
  const one = agentInvocation(claude, template, task("medium"), { workdir: "/w", ports: 1 });
  assert.match(one.prompt, /PORTS: .*on the port in \$PORT, leased to you alone/);
  assert.doesNotMatch(one.prompt, /SERVICE_PORTS/);
  const two = agentInvocation(claude, template, task("medium"), { workdir: "/w", ports: 2 });
  assert.match(two.prompt, /\$SERVICE_PORTS/);
  const none = agentInvocation(claude, template, task("medium"), { workdir: "/w", ports: 0 });
  assert.doesNotMatch(none.prompt, /PORTS:/);
});
