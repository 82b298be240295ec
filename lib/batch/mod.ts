/**
 * The batch lane (DESIGN.md §15), as the run loop wires it: the lane, its settings and events,
 * and what the loop asks of the providers (which adapter has a batch API, at which endpoint).
 */
export { BatchLane, type BatchLaneOptions, type BatchSettings } from "./lane.ts";
export type {
  BatchAdopted,
  BatchLaneEvent,
  BatchResult,
  BatchSubmitted,
  BatchWork,
} from "./lane_types.ts";
export type { BatchApi } from "./api.ts";
export {
  type BatchEndpoint,
  batchEndpoint,
  batchProviderOf,
  batchRoutingHint,
} from "./provider.ts";
