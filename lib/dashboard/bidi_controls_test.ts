import assert from "node:assert/strict";
import { showBidiControls } from "./bidi_controls.ts";

Deno.test("showBidiControls() shows every reordering control and leaves other text alone", () => {
  const cases: [string, string][] = [
    ["\u202Egpj.exe", "⟨U+202E⟩gpj.exe"],
    ["a\u202Ab\u202Bc\u202Cd\u202De", "a⟨U+202A⟩b⟨U+202B⟩c⟨U+202C⟩d⟨U+202D⟩e"],
    ["\u2066x\u2067y\u2068z\u2069", "⟨U+2066⟩x⟨U+2067⟩y⟨U+2068⟩z⟨U+2069⟩"],
    ["שלום עולם · مرحبا", "שלום עולם · مرحبا"],
    ["<b>markup</b> stays text", "<b>markup</b> stays text"],
    ["", ""],
  ];
  for (const [input, expected] of cases) assert.equal(showBidiControls(input), expected, input);
});
