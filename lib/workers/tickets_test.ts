import assert from "node:assert/strict";
import { redeemable, TICKET_PREFIX, TicketBook, type TicketGrant } from "./tickets.ts";

const grant = (over: Partial<TicketGrant> = {}): TicketGrant => ({
  run_id: "r1",
  task_id: "t1",
  session_id: "s-r1-001",
  job: "svc-t1-abc",
  isolation: "pod:registry.example/service:1",
  expires_at: 10_000,
  ...over,
});

Deno.test("redeemable() refuses an unknown, used, expired or other run's ticket, each with its code", () => {
  const entry = { ...grant(), digest: "d" };
  const table: [string, Parameters<typeof redeemable>, string | true][] = [
    ["unknown", [undefined, "r1", 0], "ticket_unknown"],
    ["used", [{ ...entry, used_at: 5 }, "r1", 6], "ticket_used"],
    ["expired at the instant", [entry, "r1", 10_000], "ticket_expired"],
    ["another run", [entry, "r2", 0], "ticket_other_run"],
    ["good", [entry, "r1", 9_999], true],
  ];
  for (const [name, args, want] of table) {
    const got = redeemable(...args);
    if (want === true) assert.equal(got.ok, true, name);
    else {
      assert.equal(got.ok, false, name);
      assert.equal((got as { code: string }).code, want, name);
    }
  }
});

Deno.test("TicketBook: a ticket claims once, for its own run, and is kept only as a digest", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let now = 1_000;
    const path = `${dir}/claim_tickets.json`;
    const book = await TicketBook.open({ path, clock: () => now });
    const ticket = await book.mint(grant());
    assert.ok(ticket.startsWith(TICKET_PREFIX) && ticket.length > 40);
    const kept = await Deno.readTextFile(path);
    assert.ok(!kept.includes(ticket.slice(TICKET_PREFIX.length)), "the ticket itself is not kept");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await book.redeem(ticket, "r2")).ok, false);
    const first = await book.redeem(ticket, "r1");
    assert.ok(first.ok);
    assert.equal(first.grant.task_id, "t1");
    assert.equal(first.grant.session_id, "s-r1-001");
    const again = await book.redeem(ticket, "r1");
    assert.ok(!again.ok && again.code === "ticket_used");
    // A restarted orchestrator reads what was kept: the used ticket stays used.
    const reopened = await TicketBook.open({ path, clock: () => now });
    const afterRestart = await reopened.redeem(ticket, "r1");
    assert.ok(!afterRestart.ok && afterRestart.code === "ticket_used");
    // An unused one survives a restart and expires on time.
    const second = await book.mint(grant({ session_id: "s-r1-002", expires_at: 5_000 }));
    const reread = await TicketBook.open({ path, clock: () => now });
    assert.equal(reread.pending("s-r1-002")?.task_id, "t1");
    now = 5_000;
    const late = await reread.redeem(second, "r1");
    assert.ok(!late.ok && late.code === "ticket_expired");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("TicketBook.revoke() makes the unused ticket of a session worthless", async () => {
  const book = new TicketBook({ clock: () => 0 });
  const ticket = await book.mint(grant());
  await book.revoke("s-r1-001");
  const got = await book.redeem(ticket, "r1");
  assert.ok(!got.ok && got.code === "ticket_unknown");
});

Deno.test("TicketBook.open() of a torn file honours no ticket rather than failing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/t.json`, '{"tickets":[{"dig');
    const book = await TicketBook.open({ path: `${dir}/t.json` });
    const got = await book.redeem(`${TICKET_PREFIX}x`, "r1");
    assert.ok(!got.ok && got.code === "ticket_unknown");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
