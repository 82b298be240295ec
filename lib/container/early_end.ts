/**
 * How a container's runtime command is read when its container's death can be learned first
 * (lib/container/death_watch.ts): the program's exit is the earlier of the command's exit and
 * the death, its output ends at the marker written after the death (lib/container/output_end.ts),
 * and a command still removing a dead container is tracked (lib/container/teardowns.ts).
 */
import { watchDeath } from "./death_watch.ts";
import { newEndMarker, untilMarker, writeEndMarkers } from "./output_end.ts";
import { trackTeardown } from "./teardowns.ts";

/** A container's end as the service reads it. */
export interface ContainerEnd {
  /** The command's exit, or the container's death when learned first. */
  exited: Promise<Deno.CommandStatus>;
  /** Its output: up to the end marker when the death is learned first. */
  output: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> };
  /** The container died while the runtime's command still tears it down. */
  dead(): boolean;
}

/**
 * The end of the container run by `child`, whose conmon writes its PID to `conmonPidfile`
 * (undefined: the command's own exit and pipes, as for docker).
 */
export function containerEnd(
  child: Deno.ChildProcess,
  conmonPidfile: string | undefined,
): ContainerEnd {
  if (!conmonPidfile) {
    return {
      exited: child.status,
      output: { stdout: child.stdout, stderr: child.stderr },
      dead: () => false,
    };
  }
  let dead = false;
  let commandExited = false;
  const commandDone = new AbortController();
  child.status.finally(() => {
    commandExited = true;
    commandDone.abort();
  }).catch(() => {});
  const marker = newEndMarker();
  const death = watchDeath(conmonPidfile, commandDone.signal).then(async (code) => {
    if (code === undefined || commandExited) return undefined;
    dead = true;
    trackTeardown(child.status);
    await writeEndMarkers(child.pid, marker);
    return { success: code === 0, code, signal: null } as Deno.CommandStatus;
  });
  return {
    exited: new Promise((resolve, reject) => {
      child.status.then(resolve, reject);
      death.then((s) => s && resolve(s), () => {});
    }),
    output: {
      stdout: untilMarker(child.stdout, marker),
      stderr: untilMarker(child.stderr, marker),
    },
    dead: () => dead,
  };
}
