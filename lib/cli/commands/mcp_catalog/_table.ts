/** A plain text table: columns padded to their widest cell, header in bold. */
import { colour } from "../../command.ts";

/** Render `rows` (the first is the header). */
export function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r, n) => {
    const line = r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
    return n === 0 ? colour.bold(line) : line;
  });
}
