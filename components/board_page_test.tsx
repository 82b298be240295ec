import assert from "node:assert/strict";
import { renderBoardPage } from "./board_page.tsx";

Deno.test("renderBoardPage() links the hashed bundle and carries no board data", () => {
  const html = renderBoardPage({ bundleUrl: "/static/board-0123456789abcdef.js" });
  assert.ok(html.startsWith('<!DOCTYPE html><html lang="en">'));
  assert.match(html, /<script type="module" src="\/static\/board-0123456789abcdef\.js"><\/script>/);
  assert.match(html, /data-island="BoardApp" data-props="\{\}"/);
  assert.match(html, /loading runs…/);
  assert.doesNotMatch(html, /projection_hash|journal_head|task_id/);
  assert.doesNotMatch(html, /https?:\/\//, "no external fonts, scripts or CDNs");
});
