/**
 * Why an agent was ended: the loop asked (timeout, stop, rate limit, reported, cancelled), or
 * its remote worker was stopping (`drain`: SIGTERM of `service worker`, DESIGN.md §17).
 */
export type EndReason = "timeout" | "stop" | "rate_limit" | "reported" | "cancelled" | "drain";
