/** True when `s` is an absolute http(s) URL (an endpoint variable a CLI can use). */
export function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false;
  const { protocol } = new URL(s);
  return protocol === "http:" || protocol === "https:";
}
