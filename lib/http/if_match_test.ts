import assert from "node:assert/strict";
import { ifMatchTags } from "./if_match.ts";

const H = "a".repeat(64);

/** Each row: an `If-Match` value a client (or an attacker) sends, and the hashes it accepts. */
const CASES: { name: string; header: string | undefined; tags: string[] | undefined }[] = [
  { name: "absent: no precondition", header: undefined, tags: undefined },
  { name: "any board (`*`): no precondition", header: "*", tags: undefined },
  { name: "`*` with spaces", header: "  * ", tags: undefined },
  { name: "one strong tag", header: `"${H}"`, tags: [H] },
  { name: "a list: any of its strong tags", header: `"x", "${H}"`, tags: ["x", H] },
  { name: "a weak tag never matches (strong comparison)", header: `W/"${H}"`, tags: [] },
  { name: "weak and strong in one list", header: `W/"${H}", "y"`, tags: ["y"] },
  { name: "a bare hash, as typed by hand", header: H, tags: [H] },
  { name: "the empty tag", header: '""', tags: [""] },
  { name: "an empty header matches nothing", header: "", tags: [] },
  { name: "an unclosed quote matches nothing", header: `"${H}`, tags: [] },
  { name: "a `*` inside a list is a tag, not a wildcard", header: `"x", *`, tags: ["x", "*"] },
];

Deno.test("If-Match: `*` sets no precondition, lists match any strong tag, weak tags never match", () => {
  for (const c of CASES) assert.deepEqual(ifMatchTags(c.header), c.tags, c.name);
});
