/**
 * The dependency graph of tasks: the checks on new tasks (unknown ids, cycles; spec §3.1), and
 * which waiting tasks a status change releases or holds back.
 */
import { SATISFIES_DEPENDENCY, type TaskStatus } from "./lifecycle.ts";

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

/** The part of a task the graph reads. */
export interface GraphNode {
  id: string;
  status: TaskStatus;
  depends_on: readonly string[];
}

/**
 * The move that brings a waiting task in line with its dependencies (pure): `unblock` when a
 * BLOCKED task's dependencies are all satisfied, `reblock` when an OPEN one's no longer are (its
 * dependency's work went back for a new attempt or failed to land), so none starts without the
 * work it depends on; undefined when the status already fits.
 */
export function dependencyMove(
  status: TaskStatus,
  satisfied: boolean,
): "unblock" | "reblock" | undefined {
  if (status === "BLOCKED" && satisfied) return "unblock";
  if (status === "OPEN" && !satisfied) return "reblock";
  return undefined;
}

/** Whether a task moving `from` → `to` can change whether its dependents may start (pure). */
export function movesDependents(from: TaskStatus, to: TaskStatus): boolean {
  return SATISFIES_DEPENDENCY.has(from) !== SATISFIES_DEPENDENCY.has(to);
}

/** Who depends on whom among the stored tasks; statuses are read from the store as they are. */
export class DependencyGraph {
  readonly #dependents = new Map<string, Set<string>>();
  readonly #statusOf: (id: string) => TaskStatus | undefined;

  /** `statusOf` answers a stored task's current status (undefined: no such task). */
  constructor(statusOf: (id: string) => TaskStatus | undefined) {
    this.#statusOf = statusOf;
  }

  /** Record the dependencies of a stored task. */
  add(task: Pick<GraphNode, "id" | "depends_on">): void {
    for (const dep of task.depends_on) {
      let set = this.#dependents.get(dep);
      if (!set) this.#dependents.set(dep, set = new Set());
      set.add(task.id);
    }
  }

  /** Ids of the tasks that depend on `id`. */
  dependentsOf(id: string): string[] {
    return [...this.#dependents.get(id) ?? []];
  }

  /** Whether the dependency `id` is satisfied: it exists and its status satisfies dependents. */
  satisfied(id: string): boolean {
    const status = this.#statusOf(id);
    return status !== undefined && SATISFIES_DEPENDENCY.has(status);
  }

  /** Whether every dependency of `task` is satisfied. */
  ready(task: Pick<GraphNode, "depends_on">): boolean {
    return task.depends_on.every((d) => this.satisfied(d));
  }

  /** {@link dependencyMove} of `task` under the current statuses of its dependencies. */
  move(task: GraphNode): "unblock" | "reblock" | undefined {
    return dependencyMove(task.status, this.ready(task));
  }
}
