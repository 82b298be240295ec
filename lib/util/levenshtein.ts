/** Edit distance and "did you mean" suggestions for unknown names. */

/** Levenshtein distance between `a` and `b` (insert, delete, substitute cost 1). */
function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * The closest of `candidates` to `name`, when it is close enough to be a likely typo; else a
 * candidate that is one whole word of `name` (`claude` for `claude-code`, `gemini` for
 * `gemini-cli`: a product's or package's name where the short one is asked).
 */
export function suggest(name: string, candidates: Iterable<string>): string | undefined {
  const all = [...candidates];
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of all) {
    const d = levenshtein(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.max(2, Math.floor(name.length / 3));
  if (bestDistance <= limit) return best;
  const words = name.toLowerCase().split(/[^a-z0-9]+/);
  return all.find((c) => words.includes(c.toLowerCase()));
}
