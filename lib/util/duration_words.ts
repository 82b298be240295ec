/** How long something lasts, in the words `status` and the run's log print (pure). */

/** `seconds` as `4h 12m`, `5m 0s` or `12s` (rounded up: "back in 1s", never "back in 0s"). */
export function durationWords(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${s}s`;
}
