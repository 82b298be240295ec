/**
 * Integrating finished work, as the run loop wires it: the run's task work (capture,
 * verification, merge-in or pull-request landing, rebase, reap) and the lane that runs it —
 * verifications side by side, merges and rebases one at a time — with what each can come to.
 */
export { IntegrationLane, type IntegrationLaneOptions, type LaneWork } from "./lane.ts";
export { janitorSignals, TaskWork, type TaskWorkOptions } from "./task_work.ts";
export type { DiffJudgement, MergeResult, RebaseResult } from "./results.ts";
