import assert from "node:assert/strict";
import { MarkerScanner, newEndMarker, untilMarker } from "./output_end.ts";
import { readAllBytes } from "../process/pipe_reader.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const MARK = enc.encode("\u0000END-1234\u0000");

/** Feed `chunks` through a scanner: the output before the marker, and whether it was found. */
function scan(chunks: string[]): { out: string; ended: boolean } {
  const s = new MarkerScanner(MARK);
  let out = "";
  for (const c of chunks) {
    const r = s.push(enc.encode(c));
    out += dec.decode(r.bytes);
    if (r.ended) return { out, ended: true };
  }
  return { out: out + dec.decode(s.flush()), ended: false };
}

Deno.test("MarkerScanner: the output ends exactly before the marker, wherever the chunks split it", () => {
  const marker = dec.decode(MARK);
  const whole = `last line\nno newline${marker}after`;
  for (let a = 0; a <= whole.length; a++) {
    for (let b = a; b <= whole.length; b += 3) {
      const got = scan([whole.slice(0, a), whole.slice(a, b), whole.slice(b)]);
      assert.deepEqual(got, { out: "last line\nno newline", ended: true }, `split ${a}/${b}`);
    }
  }
});

Deno.test("MarkerScanner: what only looks like the marker's start is output, never held back at the end", () => {
  const cases: [string[], string][] = [
    [["\u0000END-12"], "\u0000END-12"], // a prefix, then the stream ends
    [["\u0000END-12", "35\u0000"], "\u0000END-1235\u0000"], // a near miss
    [["\u0000\u0000END-1", "23"], "\u0000\u0000END-123"],
    [["", "", "plain"], "plain"],
    [[], ""],
  ];
  for (const [chunks, out] of cases) {
    assert.deepEqual(scan(chunks), { out, ended: false }, JSON.stringify(chunks));
  }
});

Deno.test("MarkerScanner: a marker the output printed itself ends it only when it is the very marker", () => {
  const other = dec.decode(newEndMarker()); // another container's, or a guess
  assert.deepEqual(scan([`a${other}b`]), { out: `a${other}b`, ended: false });
  assert.notDeepEqual(newEndMarker(), newEndMarker());
});

/** A byte stream of `chunks` that records whether it was read to its end. */
function source(chunks: string[]): { stream: ReadableStream<Uint8Array>; drained: Promise<void> } {
  let done!: () => void;
  const drained = new Promise<void>((r) => done = r);
  const queue = chunks.map((c) => enc.encode(c));
  const stream = new ReadableStream({
    type: "bytes", // as a child's pipe
    pull(c: ReadableByteStreamController) {
      const next = queue.shift();
      if (next) c.enqueue(next);
      else {
        c.close();
        c.byobRequest?.respond(0);
        done();
      }
    },
  });
  return { stream, drained };
}

Deno.test("untilMarker: a BYOB reader gets the bytes before the marker; what follows is read and dropped", async () => {
  const marker = dec.decode(MARK);
  const { stream, drained } = source([
    "one\n",
    `two${marker.slice(0, 4)}`,
    `${marker.slice(4)}x`,
    "podman's",
  ]);
  assert.equal(dec.decode(await readAllBytes(untilMarker(stream, MARK))), "one\ntwo");
  await drained; // the writer never meets a closed pipe
});

Deno.test("untilMarker: a stream without the marker is passed on whole, to its end", async () => {
  const { stream } = source(["a", "\u0000END", "-12", "b"]);
  assert.equal(dec.decode(await readAllBytes(untilMarker(stream, MARK))), "a\u0000END-12b");
});
