import type { HeadlessProblem } from "./types.ts";

/** True when `s` is an absolute http(s) URL (an endpoint variable a CLI can use). */
function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false;
  const { protocol } = new URL(s);
  return protocol === "http:" || protocol === "https:";
}

/**
 * The problem with an endpoint variable that is set but is not an http(s) URL (the CLI would
 * fail on it at start-up), naming the variable and an example of what it should hold.
 */
export function endpointProblem(
  env: Readonly<Record<string, string>>,
  name: string,
  example: string,
): HeadlessProblem | undefined {
  const url = env[name];
  if (!url || isHttpUrl(url)) return undefined;
  return {
    problem: `${name} is not an http(s) URL: ${url}`,
    fix: `set it to the ${example}, or unset it`,
  };
}
