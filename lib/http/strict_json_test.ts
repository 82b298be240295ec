import assert from "node:assert/strict";
import { findDuplicateKey, parseStrictJson } from "./strict_json.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("parseStrictJson: the catalogue of broken bodies, each with its code and place", () => {
  const cases: [Uint8Array, string, RegExp][] = [
    [
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
      "invalid_utf8",
      /0xff at offset 6/,
    ],
    [new Uint8Array([0x22, 0xe2, 0x82]), "invalid_utf8", /offset 1|ends inside/],
    [new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]), "invalid_utf8", /0xed at offset 1/],
    [enc('{"decision":"bogus","decision":"approve"}'), "duplicate_key", /"decision" .* top level/],
    [enc('{"tasks":[{"a":1},{"a":1,"b":2,"\\u0061":3}]}'), "duplicate_key", /"a" .* tasks\[1\]/],
    [enc("{nope"), "invalid_json", /not JSON/],
  ];
  for (const [bytes, code, message] of cases) {
    const r = parseStrictJson(bytes);
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.error.code, code);
      assert.match(r.error.message, message);
    }
  }
});

Deno.test("findDuplicateKey: same key in different objects, or in strings, is fine", () => {
  assert.equal(
    findDuplicateKey('{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\\"a\\":1,\\"a\\""}'),
    undefined,
  );
  assert.deepEqual(parseStrictJson(enc('{"é":"ü"}')), {
    ok: true,
    value: { "é": "ü" },
    text: '{"é":"ü"}',
  });
});
