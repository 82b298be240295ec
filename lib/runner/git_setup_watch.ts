/**
 * What a run says when the repository's own git setup that runs commands (hooks, drivers,
 * helpers: lib/git/command_setup.ts) changed while it ran — most likely an agent run as a host
 * process, which can write your `.git/config` and hooks. The service's git never runs them
 * (docs/security.md); your own `git commit` would, so the run's last lines name each one.
 */
import { type CommandSetup, readCommandSetup, setupChanges } from "../git/command_setup.ts";
import { printable } from "../util/printable.ts";

/** Read the setup now; the returned function reads it again and words what changed since. */
export async function watchGitSetup(root: string): Promise<() => Promise<string[]>> {
  const before: CommandSetup | undefined = await readCommandSetup(root).catch(() => undefined);
  return async () => {
    if (!before) return [];
    const after = await readCommandSetup(root).catch(() => undefined);
    const changes = after ? setupChanges(before, after) : [];
    if (changes.length === 0) return [];
    return [
      "WARNING: your repository's git setup that runs commands changed during this run (an " +
      "agent run as a host process can write it; the service's git never runs it, your own " +
      "git would):",
      ...changes.map((line) => `  ${printable(line)}`),
      "  Remove what you did not put there yourself (`git config --unset <key>`, delete the " +
      "hook); `isolation: container` keeps agents out of it (docs/security.md).",
    ];
  };
}
