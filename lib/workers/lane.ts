/**
 * Remote workers as the run loop wires them (DESIGN.md §16, §17): the run's remote work (the
 * tasks workers run, their reports and leases, the fleet it watches), the desk the server's
 * worker routes call while the run is live, the claim tickets of Kubernetes Jobs, and the sweep
 * of a finished run's refs from the remote; whether the server takes workers at all.
 */
export { type RemoteEvent, RemoteWork, type RemoteWorkOptions } from "./remote_work.ts";
export { openDesk } from "./desk.ts";
export { TicketBook } from "./tickets.ts";
export { sweepRunRemote } from "./remote_sweep.ts";
export { workersConfigured } from "./admission.ts";
