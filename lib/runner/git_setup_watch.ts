/**
 * What a run says when the repository's own git setup that runs commands (hooks, drivers,
 * helpers: lib/git/command_setup.ts) changed while it ran — most likely an agent run as a host
 * process, which can write your `.git/config` and hooks. The service's git never runs them
 * (docs/security.md); your own `git commit` would, so the run's last lines name each one. The
 * setup is recorded in the run's directory as it began and as it ended (lib/runs/git_setup.ts),
 * so `status` says the same afterwards.
 */
import { type CommandSetup, readCommandSetup, setupChanges } from "../git/command_setup.ts";
import { printable } from "../util/printable.ts";
import { readGitSetupRecord, writeGitSetupRecord } from "../runs/git_setup.ts";
import { gitSetupWarning } from "../runs/git_setup_words.ts";

/**
 * Read the setup now (for a resumed run: as its record says the run first began) and record it
 * at `recordPath`; the returned function reads it again, records it as the run's end and words
 * what changed since. A record that cannot be written costs only `status`'s copy of the warning:
 * the run still prints it.
 */
export async function watchGitSetup(
  root: string,
  recordPath: string,
): Promise<() => Promise<string[]>> {
  // A resumed run keeps the setup as the run first began: what a killed session's agent planted
  // is still named, not taken for the new baseline.
  const before: CommandSetup | undefined = readGitSetupRecord(recordPath)?.before ??
    await readCommandSetup(root).catch(() => undefined);
  if (before) await writeGitSetupRecord(recordPath, { before }).catch(() => {});
  return async () => {
    if (!before) return [];
    const after = await readCommandSetup(root).catch(() => undefined);
    if (!after) return [];
    await writeGitSetupRecord(recordPath, { before, after }).catch(() => {});
    const changes = setupChanges(before, after);
    if (changes.length === 0) return [];
    return gitSetupWarning(changes.map(printable), false);
  };
}
