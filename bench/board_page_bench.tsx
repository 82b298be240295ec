/**
 * Server render speed of the board: `deno bench -A bench/board_page_bench.ts`.
 * The page shell carries no data; the board itself is rendered by the same components
 * (server-side here, in the island in the browser).
 */
import { renderToString } from "preact-render-to-string";
import { BoardColumns } from "../islands/parts/board_columns.tsx";
import { JournalReceipt } from "../islands/parts/journal_receipt.tsx";
import { renderBoardPage } from "../components/board_page.tsx";
import { manyCardReceipt } from "../tests/_fixtures.ts";

const receipt500 = manyCardReceipt(500);
const receipt5000 = manyCardReceipt(5000);

Deno.bench("render the board page shell", { group: "page" }, () => {
  renderBoardPage({ bundleUrl: "/static/board-0123456789abcdef.js" });
});

Deno.bench(
  "render a 500-card board (receipt + five columns)",
  { group: "board", baseline: true },
  () => {
    renderToString(
      <>
        <JournalReceipt receipt={receipt500} />
        <BoardColumns board={receipt500.board} />
      </>,
    );
  },
);

Deno.bench("render a 5 000-card board (receipt + five columns)", { group: "board" }, () => {
  renderToString(
    <>
      <JournalReceipt receipt={receipt5000} />
      <BoardColumns board={receipt5000.board} />
    </>,
  );
});
