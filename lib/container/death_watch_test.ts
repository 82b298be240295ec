import assert from "node:assert/strict";
import { join } from "node:path";
import { conmonFacts, parseExitCode, watchDeath } from "./death_watch.ts";

const PIDFILE = "/w/.sdd/runtime/containers/s1/conmon/service-s1.conmon-pid";
const CID = "f3cb6853d14e80e624c30494153589a0db692109c2f218fd7f77f13975aa590d";

Deno.test("conmonFacts: the exit directory and container id from the command line of our own conmon, nothing else", () => {
  const cases: [string[], ReturnType<typeof conmonFacts>][] = [
    [
      [
        "/usr/bin/conmon",
        "--api-version",
        "1",
        "-c",
        CID,
        "-u",
        CID,
        "--exit-dir",
        "/run/libpod/exits",
        "--conmon-pidfile",
        PIDFILE,
      ],
      { exitDir: "/run/libpod/exits", cid: CID },
    ],
    [["conmon", `--cid=${CID}`, "--exit-dir=/x/exits", `--conmon-pidfile=${PIDFILE}`], {
      exitDir: "/x/exits",
      cid: CID,
    }],
    // Another container's conmon, that took the PID of ours once it had gone.
    [
      ["conmon", "-c", CID, "--exit-dir", "/x", "--conmon-pidfile", "/other/x.conmon-pid"],
      undefined,
    ],
    [["conmon", "-c", CID, "--exit-dir", "/x"], undefined],
    [["/usr/bin/sleep", "-c", CID, "--exit-dir", "/e", "--conmon-pidfile", PIDFILE], undefined],
    [["conmon", "-c", CID, "--conmon-pidfile", PIDFILE], undefined], // no exit directory
    [
      ["conmon", "-c", "../../etc/passwd", "--exit-dir", "/e", "--conmon-pidfile", PIDFILE],
      undefined,
    ],
    [["conmon", "-c", `${CID}/x`, "--exit-dir", "/e", "--conmon-pidfile", PIDFILE], undefined],
    [["conmon", "--conmon-pidfile", PIDFILE, "--exit-dir"], undefined],
    [[""], undefined],
  ];
  for (const [args, want] of cases) {
    assert.deepEqual(conmonFacts(args.join("\0") + "\0", PIDFILE), want, args.join(" "));
  }
});

Deno.test("parseExitCode: a decimal code as conmon writes it; anything else is no code", () => {
  const cases: [string, number | undefined][] = [
    ["0", 0],
    ["137", 137],
    ["3\n", 3],
    ["", undefined],
    ["x", undefined],
    ["1e3", undefined],
    ["12345678", undefined],
  ];
  for (const [text, want] of cases) assert.equal(parseExitCode(text), want, JSON.stringify(text));
});

Deno.test("watchDeath: no conmon PID file before the runtime's command ends is no death learned", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ended = new AbortController();
    const watching = watchDeath(join(dir, "c.conmon-pid"), ended.signal);
    ended.abort();
    assert.equal(await watching, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
