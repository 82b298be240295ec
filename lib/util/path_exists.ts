/** Whether anything is at `path` (a link itself counts: it is not followed). */
export function pathExists(path: string): Promise<boolean> {
  return Deno.lstat(path).then(() => true, () => false);
}
