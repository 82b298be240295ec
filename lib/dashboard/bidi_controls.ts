/**
 * Text an agent wrote, made safe to read on the board: the Unicode controls that reorder text
 * (embeddings, overrides and isolates, U+202A–U+202E and U+2066–U+2069 — the "Trojan Source"
 * characters) are shown as visible marks such as `⟨U+202E⟩` instead of acting, so a title or a
 * file name written `gpj.exe` behind an override cannot read as `exe.jpg`. Letters of
 * right-to-left scripts are untouched. Pure.
 */

const REORDERING = /[\u202A-\u202E\u2066-\u2069]/g;

/** `text` with each reordering control replaced by a visible `⟨U+XXXX⟩`. */
export function showBidiControls(text: string): string {
  return text.replace(
    REORDERING,
    (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
