/**
 * The review board page (spec §4 `GET /dashboard/review-board`): a document with no data in
 * it. The board app island loads everything from the JSON API once the bundle runs.
 */
import { renderToString } from "preact-render-to-string";
import { BOARD_CSS } from "./styles.ts";
import { Island } from "./island.tsx";
import { BoardApp } from "../islands/board_app.tsx";

/** Props of {@link BoardPage}. */
export interface BoardPageProps {
  /** URL of the content-hashed islands bundle. */
  bundleUrl: string;
}

/** The whole HTML document. */
function BoardPage({ bundleUrl }: BoardPageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Review board</title>
        <link rel="icon" href="data:," />
        <style dangerouslySetInnerHTML={{ __html: BOARD_CSS }} />
        <script type="module" src={bundleUrl} />
      </head>
      <body>
        <Island name="BoardApp" props={{}}>
          <BoardApp />
        </Island>
        <noscript>
          <p class="error">
            The review board needs JavaScript: it loads the board from the JSON API at
            /review-board/runs.
          </p>
        </noscript>
      </body>
    </html>
  );
}

/** The page as HTML text. */
export function renderBoardPage(props: BoardPageProps): string {
  return "<!DOCTYPE html>" + renderToString(<BoardPage {...props} />);
}
