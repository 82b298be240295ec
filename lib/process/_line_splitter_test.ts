import assert from "node:assert/strict";
import { lineSplitter } from "./_line_splitter.ts";

function split(chunks: string[]): number[] {
  const lengths: number[] = [];
  const splitter = lineSplitter((line) => lengths.push(line.length));
  for (const chunk of chunks) splitter.push(chunk);
  splitter.flush();
  return lengths;
}

Deno.test("lineSplitter() passes a long line on in the same 64 KiB pieces however it was read", () => {
  const long = "a".repeat(150_000);
  const expected = [65536, 65536, 18928, 3];
  assert.deepEqual(split([long + "\nend"]), expected, "read at once (a loaded machine)");
  const small = Array.from({ length: 150 }, () => "a".repeat(1000));
  assert.deepEqual(split([...small, "\nend"]), expected, "read in small pieces");
  assert.deepEqual(split([long.slice(0, 70_000), long.slice(70_000) + "\r", "\nend"]), expected);
});
