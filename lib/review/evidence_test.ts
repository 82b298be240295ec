/**
 * The evidence endpoint's checks on a really sealed bundle, and its tamper catalogue: each way
 * of editing what was sealed answers `verified: false` with a reason, never an error.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../journal/journal_file.ts";
import * as ev from "../journal/events.ts";
import { sha256Hex } from "../journal/hash.ts";
import { bundlePath } from "../verification/seal.ts";
import { passedCheck, producerRun, sealSample } from "../verification/_test_fixtures.ts";
import { evidenceDir, journalPath, workspacePaths } from "../workspace.ts";
import { EvidenceNotFoundError, readEvidence } from "./evidence.ts";

const PRODUCERS = [
  producerRun("tests", "ok | 3 passed | 0 failed (4ms)\n"),
  producerRun("coverage", "cover: 81.2%\n", 1),
];
const SAMPLE = {
  runId: "r1",
  taskId: "t1",
  producers: PRODUCERS,
  checks: [
    passedCheck("path_exists", "src/a.ts"),
    passedCheck("quality_gate", "deno lint", "lint"),
  ],
};

async function sealed() {
  const root = await Deno.makeTempDir({ prefix: "evidence-" });
  const paths = workspacePaths(root);
  const runId = "r1";
  const journal = journalPath(paths, runId);
  await Deno.mkdir(join(paths.runs, runId), { recursive: true });
  await appendEvents(journal, [
    ev.runStarted({ run_id: runId }),
    ev.taskClaimed({ task_id: "t1", session_id: "s1" }),
  ]);
  const bundle = await sealSample(paths, SAMPLE);
  return {
    root,
    paths,
    runId,
    journal,
    bundle,
    dir: evidenceDir(paths, runId, "t1"),
    read: () => readEvidence(paths, runId, "t1"),
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("a sealed bundle verifies: outputs, chained hash, journal, signature, audit entry", async () => {
  await using s = await sealed();
  const served = await s.read();
  assert.equal(served.verified, true, served.problems.join("; "));
  assert.deepEqual(served.problems, []);
  assert.equal(served.bundle_hash, s.bundle.bundle_hash);
  assert.match(String(served.bundle_hash), /^sha256:[0-9a-f]{64}$/);
  const producers = served.producers as {
    name: string;
    exit_code: number;
    output: { sha256: string; size: number };
  }[];
  assert.deepEqual(producers.map((p) => [p.name, p.exit_code, p.output.size]), [
    ["tests", 0, 31],
    ["coverage", 1, 13],
  ]);
  // Outputs are content-addressed beside the bundle.
  for (const p of PRODUCERS) {
    const hex = sha256Hex(p.output);
    assert.deepEqual(await Deno.readFile(join(s.dir, hex)), p.output);
  }
  // The journal row chains the hash and cites the evidence.sealed entry on the audit chain.
  const rows = (await Deno.readTextFile(s.journal)).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(rows.at(-1).data, {
    task_id: "t1",
    bundle_hash: s.bundle.bundle_hash,
    audit_event_hash: s.bundle.audit_entry_hash,
  });
  assert.equal(rows.at(-1).type, "task_evidence_sealed");
  const audit = await Deno.readTextFile(join(s.paths.audit, "audit.jsonl"));
  const entry = JSON.parse(audit.trim().split("\n").at(-1)!);
  assert.equal(entry.event, "evidence.sealed");
  assert.equal(sha256Hex(audit.trim().split("\n").at(-1)!), s.bundle.audit_entry_hash);
  // The stored bytes are the canonical bundle, and a Python-style recomputation agrees.
  const text = await Deno.readTextFile(bundlePath(s.paths, s.runId, "t1"));
  const { bundle_hash: _h, ...rest } = JSON.parse(text);
  const keys = Object.keys(rest).sort();
  assert.deepEqual(Object.keys(rest), keys, "keys are sorted (canonical JSON)");
});

/** Ways to tamper with what was sealed, each of which must turn `verified` false. */
const TAMPERS: {
  name: string;
  check: string;
  tamper: (s: Awaited<ReturnType<typeof sealed>>) => Promise<void>;
}[] = [
  {
    name: "an output edited",
    check: "outputs_rehash",
    tamper: async (s) => {
      const hex = sha256Hex(PRODUCERS[0].output);
      await Deno.writeTextFile(join(s.dir, hex), "ok | 9 passed | 0 failed (4ms)\n");
    },
  },
  {
    name: "an output deleted",
    check: "outputs_rehash",
    tamper: (s) => Deno.remove(join(s.dir, sha256Hex(PRODUCERS[1].output))),
  },
  {
    name: "the bundle edited (an exit code)",
    check: "bundle_hash_chained",
    tamper: async (s) => {
      const path = bundlePath(s.paths, s.runId, "t1");
      await Deno.writeTextFile(
        path,
        (await Deno.readTextFile(path)).replace('"exit_code":1', '"exit_code":0'),
      );
    },
  },
  {
    name: "the bundle edited with its bundle_hash and outputs made consistent",
    check: "bundle_hash_chained",
    tamper: async (s) => {
      const path = bundlePath(s.paths, s.runId, "t1");
      const b = JSON.parse(await Deno.readTextFile(path));
      b.verdict.passed = false;
      await Deno.writeTextFile(path, JSON.stringify(b));
    },
  },
  {
    name: "the bundle replaced by garbage",
    check: "bundle_hash_chained",
    tamper: (s) => Deno.writeTextFile(bundlePath(s.paths, s.runId, "t1"), "{not json"),
  },
  {
    name: "the bundle deleted",
    check: "bundle_hash_chained",
    tamper: (s) => Deno.remove(bundlePath(s.paths, s.runId, "t1")),
  },
  {
    name: "an output digest rewritten into a path",
    check: "outputs_rehash",
    tamper: async (s) => {
      const path = bundlePath(s.paths, s.runId, "t1");
      const b = JSON.parse(await Deno.readTextFile(path));
      b.producers[0].output.sha256 = "sha256:../../../audit/key";
      await Deno.writeTextFile(path, JSON.stringify(b));
    },
  },
  {
    name: "a non-integer number in the bundle (no canonical form)",
    check: "bundle_hash_chained",
    tamper: async (s) => {
      const path = bundlePath(s.paths, s.runId, "t1");
      const b = JSON.parse(await Deno.readTextFile(path));
      b.producers[0].duration_ms = 1.5;
      await Deno.writeTextFile(path, JSON.stringify(b));
    },
  },
  {
    name: "the bundle replaced by a JSON array",
    check: "bundle_hash_chained",
    tamper: (s) => Deno.writeTextFile(bundlePath(s.paths, s.runId, "t1"), "[1,2,3]"),
  },
  {
    name: "the journal row edited",
    check: "journal_verified",
    tamper: async (s) => {
      const text = await Deno.readTextFile(s.journal);
      await Deno.writeTextFile(s.journal, text.replace('"session_id":"s1"', '"session_id":"s2"'));
    },
  },
  {
    name: "the journal's sealed row rewritten to a forged hash",
    check: "journal_verified",
    tamper: async (s) => {
      const text = await Deno.readTextFile(s.journal);
      await Deno.writeTextFile(
        s.journal,
        text.replace(s.bundle.bundle_hash, "sha256:" + "e".repeat(64)),
      );
    },
  },
  {
    name: "a signature made with the wrong key (bundle, journal row and hash all consistent)",
    check: "signature_valid",
    tamper: async (s) => {
      // Reseal with another key as the service would, then swap the key back.
      const keyFile = join(s.paths.audit, "key");
      const real = await Deno.readTextFile(keyFile);
      await Deno.remove(join(s.paths.audit, "audit.jsonl"));
      await Deno.writeTextFile(keyFile, "f".repeat(64) + "\n");
      await sealSample(s.paths, SAMPLE);
      await Deno.writeTextFile(keyFile, real);
    },
  },
  {
    name: "the audit chain truncated",
    check: "audit_entry_valid",
    tamper: (s) => Deno.writeTextFile(join(s.paths.audit, "audit.jsonl"), ""),
  },
];

for (const t of TAMPERS) {
  Deno.test(`evidence tamper catalogue: ${t.name} → verified false`, async () => {
    await using s = await sealed();
    await t.tamper(s);
    const served = await s.read();
    assert.equal(served.verified, false);
    assert.equal((served.checks as unknown as Record<string, boolean>)[t.check], false, t.check);
    assert.ok(served.problems.length > 0);
  });
}

Deno.test("no bundle: 404 no_evidence_producers, or evidence_not_sealed when the task declared producers", async () => {
  await using s = await sealed();
  const other = () => readEvidence(s.paths, s.runId, "t2");
  await assert.rejects(
    other,
    (e) => e instanceof EvidenceNotFoundError && e.code === "no_evidence_producers",
  );
  await Deno.mkdir(join(s.paths.backlog, "claimed"), { recursive: true });
  await Deno.writeTextFile(
    join(s.paths.backlog, "claimed", "t2.yaml"),
    "id: t2\nevidence:\n  - {name: tests, command: deno test, timeout_s: 60}\n",
  );
  await assert.rejects(
    other,
    (e) =>
      e instanceof EvidenceNotFoundError && e.code === "evidence_not_sealed" &&
      /declared 1/.test(e.message),
  );
});
