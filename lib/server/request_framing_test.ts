import assert from "node:assert/strict";
import { MAX_HEAD_BYTES, RequestFraming } from "./request_framing.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("RequestFraming: heads, content-length and chunked bodies, split anywhere", () => {
  const stream = "GET / HTTP/1.1\r\nHost: a\r\n\r\n" +
    "POST /t HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello" +
    "POST /t HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
    "GET /x HTTP/1.1\r\n";
  for (const size of [1, 2, 7, 1000]) {
    const f = new RequestFraming();
    let heads = 0;
    const all = bytes(stream);
    for (let i = 0; i < all.length; i += size) {
      heads += f.push(all.subarray(i, i + size)).headsCompleted;
    }
    assert.equal(heads, 3, `split every ${size} bytes`);
    assert.equal(f.inHead, true, "the fourth head is open");
  }
});

Deno.test("RequestFraming: a body that looks like a head is not counted; oversized heads are flagged", () => {
  const f = new RequestFraming();
  const body = "GET /evil HTTP/1.1\r\n\r\n";
  const step = f.push(bytes(`POST / HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
  assert.equal(step.headsCompleted, 1);
  assert.equal(f.inHead, false);
  const big = new RequestFraming().push(
    bytes("GET / HTTP/1.1\r\nX: " + "a".repeat(MAX_HEAD_BYTES)),
  );
  assert.equal(big.headTooLarge, true);
});

Deno.test("RequestFraming: a head ends at the first CRLF CRLF however the bytes are split", () => {
  const stream = "GET /a HTTP/1.1\r\nX: a\r\r\n\r\n" + // a stray CR before the blank line
    "\r\n" + // a stray CRLF between requests
    "POST /b HTTP/1.1\r\nContent-Length: 4\r\n\r\n\r\n\r\n" + // a body of CRLF CRLF
    "GET /c HTTP/1.1\r\n\n\r\n"; // LF LF CRLF is not the end
  const all = bytes(stream);
  for (let cut = 1; cut < all.length; cut++) {
    const f = new RequestFraming();
    const heads = f.push(all.subarray(0, cut)).headsCompleted +
      f.push(all.subarray(cut)).headsCompleted;
    assert.equal(heads, 2, `split at ${cut}`);
    assert.equal(f.inHead, true, `split at ${cut}: the third head is open`);
  }
});
