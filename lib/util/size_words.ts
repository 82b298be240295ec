/** A size in words for people (pure, importing nothing: the board's cards use it too). */

/** Bytes in a megabyte as the service counts them (MiB, as git and GitHub do). */
export const MB = 1024 * 1024;

/** `bytes` in MB with one decimal ("60.0 MB"), or in bytes below a tenth of one ("512 bytes"). */
export function sizeText(bytes: number): string {
  return bytes < MB / 10 ? `${bytes} bytes` : `${(bytes / MB).toFixed(1)} MB`;
}
