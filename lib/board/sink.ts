/** The board fold as an incremental journal sink. */
import type { RowSink } from "../journal/incremental.ts";
import { cloneFoldState, foldReads, foldRow, type FoldState, initialFoldState } from "./fold.ts";

/** Folds rows one by one into a {@link FoldState}. */
export const BOARD_FOLD_SINK: RowSink<FoldState> = {
  init: initialFoldState,
  apply: foldRow,
  clone: cloneFoldState,
  reads: foldReads,
};
