/** A size in words for people (pure, importing nothing: the board's cards use it too). */

/** Bytes in a megabyte as the service counts them (MiB, as git and GitHub do). */
export const MB = 1024 * 1024;

/** `bytes` in MB with one decimal ("60.0 MB"), or in bytes below a tenth of one ("512 bytes"). */
export function sizeText(bytes: number): string {
  return bytes < MB / 10 ? `${bytes} bytes` : `${(bytes / MB).toFixed(1)} MB`;
}

/** "diff too large to show: 61.0 MB in 3 files" (a cut diff: the board's and the log's words). */
export function tooLargeWords(truncated: { bytes: number; files: number }): string {
  return `diff too large to show: ${(truncated.bytes / MB).toFixed(1)} MB in ${truncated.files} ` +
    (truncated.files === 1 ? "file" : "files");
}
