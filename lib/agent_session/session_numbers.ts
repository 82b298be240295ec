/**
 * Session ids number a run's sessions in the order they started (`s-<run tail>-<n>-<random>`).
 * A resumed run goes on from the highest number its journal holds, so `001` names one session of
 * the run, not the first of each process that drove it (pure).
 */

/** The highest session number among `sessionIds` of the run whose id ends in `runTail`; 0 if none. */
export function highestSessionNumber(sessionIds: Iterable<string>, runTail: string): number {
  const prefix = `s-${runTail}-`;
  let highest = 0;
  for (const id of sessionIds) {
    if (!id.startsWith(prefix)) continue;
    const match = /^(\d{3,9})-/.exec(id.slice(prefix.length));
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest;
}
