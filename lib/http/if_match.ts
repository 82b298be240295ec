/**
 * `If-Match` of a review action (RFC 9110 §13.1.1, docs/board.md): which projection hashes the
 * client says it saw. `*` matches any board (no precondition); a list matches when one of its
 * strong tags is the current hash; a weak tag (`W/"…"`) never matches, since `If-Match` compares
 * strongly; a bare hash without quotes is taken as written (hand-typed curl).
 */

/** The hashes an `If-Match` value accepts; undefined when it sets no precondition. */
export function ifMatchTags(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === "*") return undefined;
  const tags: string[] = [];
  for (const member of value.split(",")) {
    const tag = member.trim();
    if (tag.startsWith("W/")) continue;
    if (tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"')) tags.push(tag.slice(1, -1));
    else if (tag && !tag.includes('"')) tags.push(tag);
  }
  return tags;
}
