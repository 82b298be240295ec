import assert from "node:assert/strict";
import { join } from "node:path";
import { LedgerFollower } from "./ledger_follow.ts";
import { summarizeLedger } from "./nudge.ts";

const SETTINGS = { threshold: 0.3, min_completions: 3 };
const record = (i: number, verified: boolean) =>
  JSON.stringify({
    task_id: `t${i}`,
    session_id: `s${i}`,
    timestamp: 1_795_000_000 + i,
    verified,
  }) +
  "\n";

async function withLedger(fn: (path: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(join(dir, "verification_nudges.jsonl"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a followed ledger's summary equals the whole file's, however its appends were cut", async () => {
  await withLedger(async (path) => {
    const follower = new LedgerFollower(path);
    let text = "";
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 300; i++) text += record(i, random() > 0.4);
    text += 'not json\n{"no_task": 1}\n';
    // Appended in pieces cut anywhere, a read after each: half lines wait for their end.
    let written = 0;
    while (written < text.length) {
      const piece = text.slice(written, written + 1 + Math.floor(random() * 900));
      await Deno.writeTextFile(path, piece, { append: true });
      written += piece.length;
      const seen = text.slice(0, written);
      const complete = seen.slice(0, seen.lastIndexOf("\n") + 1);
      assert.deepEqual(
        (await follower.read()).summary(SETTINGS),
        summarizeLedger(complete, SETTINGS),
      );
    }
    assert.equal((await follower.read()).size, 300);
  });
});

Deno.test("a ledger moved aside, shortened or rewritten in place is read again from its start", async () => {
  await withLedger(async (path) => {
    const follower = new LedgerFollower(path);
    await Deno.writeTextFile(path, record(1, false) + record(2, false) + record(3, false));
    assert.equal((await follower.read()).summary(SETTINGS).unverified_count, 3);

    // `service verification reset` moves it aside; the next completion starts a new file.
    await Deno.rename(path, path + ".old");
    assert.equal((await follower.read()).size, 0, "no ledger: an empty one");
    await Deno.writeTextFile(path, record(4, true));
    assert.deepEqual((await follower.read()).summary(SETTINGS).verified_count, 1);

    // Shortened, then rewritten in place at the same length (one record's verdict flipped).
    await Deno.writeTextFile(path, record(5, true) + record(6, true));
    await follower.read();
    await Deno.writeTextFile(path, record(5, true));
    assert.equal((await follower.read()).size, 1);
    await Deno.writeTextFile(path, record(5, false));
    const s = (await follower.read()).summary(SETTINGS);
    assert.deepEqual([s.total_completions, s.unverified_count, s.recent_unverified], [1, 1, [
      "t5",
    ]]);
  });
});

Deno.test("reads asked for at once each see the ledger whole, none twice", async () => {
  await withLedger(async (path) => {
    const follower = new LedgerFollower(path);
    await Deno.writeTextFile(path, record(1, true) + record(2, false));
    const tallies = await Promise.all([follower.read(), follower.read(), follower.read()]);
    for (const t of tallies) assert.equal(t.size, 2);
  });
});
