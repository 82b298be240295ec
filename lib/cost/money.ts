/**
 * The one way the service prints money. Spend is kept in integer micro-USD (DESIGN.md §7); every
 * text that shows it — `service cost`, `service status`, the budget stop of a run — prints it
 * through {@link formatUsd}, so the same amount always reads the same.
 */

/**
 * Integer micro-USD as dollars with 4 decimals (`$1.2346`), rounded half up: agents' spend is
 * often a fraction of a cent, which 2 decimals would show as `$0.00`. Pure.
 */
export function formatUsd(micro: number): string {
  const sign = micro < 0 ? "-" : "";
  const tenThousandths = Math.round(Math.abs(micro) / 100);
  const dollars = Math.floor(tenThousandths / 10_000);
  const frac = String(tenThousandths % 10_000).padStart(4, "0");
  return `${sign}$${dollars}.${frac}`;
}
