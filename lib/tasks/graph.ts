/** Pure dependency checks for task creation: unknown ids and cycles (spec §3.1). */

/** Why a set of new tasks cannot be created. */
export type GraphProblem =
  | { kind: "unknown"; task: string; dependency: string }
  | { kind: "cycle"; cycle: string[] };

/**
 * Check the dependencies of `added` (id -> depends_on) against the `existing` ids. Existing
 * tasks can only depend on existing tasks, so any cycle runs through the added ones.
 */
export function checkDependencies(
  added: ReadonlyMap<string, readonly string[]>,
  existing: (id: string) => boolean,
): GraphProblem | undefined {
  for (const [task, deps] of added) {
    for (const dep of deps) {
      if (!added.has(dep) && !existing(dep)) return { kind: "unknown", task, dependency: dep };
    }
  }
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    const s = state.get(id);
    if (s === "done") return undefined;
    if (s === "visiting") return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, "visiting");
    stack.push(id);
    for (const dep of added.get(id) ?? []) {
      if (!added.has(dep)) continue;
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(id, "done");
    return undefined;
  };
  for (const id of added.keys()) {
    const cycle = visit(id);
    if (cycle) return { kind: "cycle", cycle };
  }
  return undefined;
}

/** A one-line description of a problem. */
export function describeProblem(p: GraphProblem): string {
  return p.kind === "unknown"
    ? `task ${JSON.stringify(p.task)} depends on unknown task ${JSON.stringify(p.dependency)}`
    : `cyclic depends_on: ${p.cycle.join(" -> ")}`;
}
