/**
 * The `WebhookHandler` contract (spec §4.2 rules 3 and 6): how one tracker signs its deliveries,
 * which header names a delivery, and how a verified payload becomes tickets. Built-in handlers
 * live in `lib/webhooks/handlers/`; others register through {@link registerHandler} in
 * `registry.ts`.
 */
import type { Ticket } from "../trackers/ticket.ts";
import type { SignatureScheme } from "./signature.ts";

/** What a handler is told about the tracker it serves (from `trackers.<name>`). */
export interface HandlerContext {
  /** The adapter name the delivery arrived under. */
  tracker: string;
  /** `trackers.<name>.project`, when configured. */
  project?: string;
  /** `trackers.<name>.api_url` (or the tracker's default). */
  apiUrl?: string;
}

/** One tracker's webhook format. */
export interface WebhookHandler {
  /** How the signature header proves the body. */
  scheme: SignatureScheme;
  /** Header(s) carrying the signature or token, first present wins (spec name first). */
  signatureHeaders: string[];
  /** Header(s) naming the delivery; without one the dedup key is the body's SHA-256. */
  deliveryHeaders: string[];
  /**
   * Tickets carried by a verified, parsed payload; `[]` for events that are not issue events
   * (they are accepted and ignored). Must not throw on odd payloads: return `[]` instead.
   */
  tickets(payload: unknown, headers: Headers, context: HandlerContext): Ticket[];
}

/** The first of `names` present in `headers`. */
export function firstHeader(headers: Headers, names: readonly string[]): string | null {
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) return value;
  }
  return null;
}
