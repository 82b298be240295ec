/** The board fold as an incremental journal sink (sequential part; no worker imports). */
import type { RowSink } from "../journal/incremental.ts";
import { cloneFoldState, foldRow, type FoldState, initialFoldState } from "./fold.ts";

/** Folds rows one by one into a {@link FoldState}. */
export const BOARD_FOLD_SINK: RowSink<FoldState> = {
  init: initialFoldState,
  apply: foldRow,
  clone: cloneFoldState,
};
