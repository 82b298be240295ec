/**
 * The webhook receiver behind `POST /webhooks/trackers/<adapter_name>` (spec §3.4, §4.2, §7.1,
 * DESIGN.md §6). In order:
 *
 * | check | outcome |
 * |---|---|
 * | no handler registered under the name | 404 `unknown_adapter` |
 * | `webhook.enabled` false or not configured | 503 `webhook_disabled` |
 * | secret variable (or its `_FILE`) empty | 503 `webhook_secret_missing` |
 * | body over 5 MiB | 413 `body_too_large`, before any hashing |
 * | signature missing or wrong | 401 `invalid_signature` |
 * | body not UTF-8 JSON (a form's `payload` field: GitHub's default content type) | 400 `invalid_payload`, key not recorded |
 * | delivery key already accepted | 200 `{"status":"replay"}`, nothing written through |
 * | an item `problem` refuses (a ticket whose issue number is not a number) | 400 `invalid_payload`, key not recorded |
 * | a code host's pull-request event about another repository (`hostScope`) | 200 `{"status":"ignored","reason":…}`, the landing not woken, key not recorded |
 * | every item out of `scope` (outside the tracker's `project`) | 200 `{"status":"ignored","reason":…}`, nothing written, key not recorded |
 * | otherwise | the items in scope to the sink, key recorded durably, 200 `{"status":"accepted"}` |
 *
 * It takes the body's bytes as read by the app (lib/http/body_limit.ts bounds them while reading
 * and refuses a larger body, declared or streamed, before it gets here) and returns data, never a
 * `Response`: the route turns it into one. It is generic over the items `T` its handlers yield and
 * the outcomes `O` its sink answers; lib/trackers/service.ts makes the receiver of tickets.
 */
import { sha256Hex } from "../journal/hash.ts";
import { MAX_WEBHOOK_BODY } from "../http/body_limit.ts";
import { firstHeader, type HandlerContext, type HostEvent } from "./handler.ts";
import type { ReplayLedger } from "./ledger.ts";
import { handlerFor, registeredNames } from "./registry.ts";
import { readSecret } from "./secret.ts";
import { verifySignature } from "./signature.ts";
import { PayloadError, webhookPayload } from "./payload.ts";

/** `trackers.<name>.webhook` as the receiver needs it. */
export interface WebhookSettings {
  enabled: boolean;
  secretEnv: string;
}

/** Body of a 200 answer; `O` is what the sink answers per item. */
export interface DeliveryAnswer<O = unknown> {
  /** `ignored`: every item it carries is out of scope (nothing written). */
  status: "accepted" | "replay" | "ignored";
  adapter: string;
  /** The dedup key: the tracker's delivery id, or `sha256:<hex>` of the body. */
  delivery_id: string;
  /** What the sink did with each item in scope (the field is named for the trackers' tickets). */
  tickets?: O[];
  /** Why it was ignored. */
  reason?: string;
}

/** What the route answers. */
export type WebhookOutcome<O = unknown> =
  | { status: 200; body: DeliveryAnswer<O> }
  | {
    status: 400 | 401 | 404 | 413 | 500 | 503;
    body: { error: { code: string; message: string } };
  };

/** One delivery as remembered for `integrations list` (never the body or the secret). */
export interface DeliveryRecord {
  at: string;
  status: number;
  outcome: string;
  delivery_id?: string;
  detail?: string;
}

/** Options of {@link WebhookReceiver}: `T` is what its handlers yield, `O` what its sink answers. */
export interface WebhookReceiverOptions<T, O> {
  ledger: ReplayLedger;
  /** Webhook settings of a configured tracker (undefined when `trackers.<name>` is absent). */
  settings: (name: string) => WebhookSettings | undefined;
  /** What the handler is told about the tracker. */
  context: (name: string) => HandlerContext;
  /** Where a delivery's items in scope go; the key is recorded only once it returned. */
  sink: (items: T[]) => Promise<O[]>;
  /** Why an item cannot be taken (a field of the wrong type), if so: the delivery is refused. */
  problem?: (item: T) => string | undefined;
  /** Why an item of tracker `name` is out of its scope, if it is. */
  scope?: (name: string, item: T) => string | undefined;
  /** One line saying what the sink did, for {@link DeliveryRecord.detail}. */
  describe?: (outcomes: O[]) => string;
  env?: (name: string) => string | undefined;
  /** Called once per delivery of a known adapter. */
  onDelivery?: (name: string, record: DeliveryRecord) => void;
  /** Told of a verified code-host pull-request event (see `WebhookHandler.hostEvent`). */
  onHostEvent?: (event: HostEvent) => void;
  /** Why tracker `name` ignores a code host's pull-request event (another repository), if so. */
  hostScope?: (name: string, event: HostEvent) => string | undefined;
  maxBodyBytes?: number;
  clock?: () => number;
}

/** Delivery ids longer than this are hashed into the key. */
const MAX_ID_LENGTH = 200;

/** Verifies, de-duplicates and feeds webhook deliveries. */
export class WebhookReceiver<T, O> {
  readonly #o: WebhookReceiverOptions<T, O>;

  constructor(options: WebhookReceiverOptions<T, O>) {
    this.#o = options;
  }

  /** Handle one delivery to `/webhooks/trackers/<name>`: its headers and its raw body bytes. */
  async receive(name: string, headers: Headers, bytes: Uint8Array): Promise<WebhookOutcome<O>> {
    const handler = handlerFor(name);
    if (!handler) {
      return fail(
        404,
        "unknown_adapter",
        `no tracker adapter named ${JSON.stringify(name.slice(0, 60))}; known: ${
          registeredNames().join(", ")
        } (add others with trackers.<name>.module)`,
      );
    }
    const outcome = await this.#receive(name, handler, headers, bytes);
    const body = outcome.body as DeliveryAnswer<O> & { error?: { code: string; message: string } };
    this.#o.onDelivery?.(name, {
      at: new Date((this.#o.clock ?? Date.now)()).toISOString(),
      status: outcome.status,
      outcome: body.error?.code ?? body.status,
      delivery_id: body.delivery_id,
      detail: body.error?.message ?? body.reason ??
        (body.tickets && this.#o.describe?.(body.tickets)),
    });
    return outcome;
  }

  async #receive(
    name: string,
    handler: NonNullable<ReturnType<typeof handlerFor>>,
    headers: Headers,
    bytes: Uint8Array,
  ): Promise<WebhookOutcome<O>> {
    const settings = this.#o.settings(name);
    if (!settings?.enabled) {
      return fail(
        503,
        "webhook_disabled",
        settings
          ? `webhooks of ${name} are disabled (trackers.${name}.webhook.enabled is false)`
          : `${name} has no webhook configured: add trackers.${name}.webhook to service.yaml`,
      );
    }
    const secret = await readSecret(settings.secretEnv, this.#o.env);
    if (!secret.ok) {
      return fail(
        503,
        "webhook_secret_missing",
        `cannot verify ${name} deliveries: ${secret.reason}`,
      );
    }
    const max = this.#o.maxBodyBytes ?? MAX_WEBHOOK_BODY;
    if (bytes.length > max) return fail(413, "body_too_large", `webhook body over ${max} bytes`);
    const signature = firstHeader(headers, handler.signatureHeaders);
    if (!verifySignature(bytes, signature, { scheme: handler.scheme, secret: secret.secret })) {
      // Named as the sender sent it (a Linear delivery's Linear-Signature, not Tracker-D-Signature).
      const sent = handler.signatureHeaders.find((h) => headers.get(h) !== null);
      return fail(
        401,
        "invalid_signature",
        sent === undefined
          ? `missing ${handler.signatureHeaders.join(" or ")} header`
          : `${sent} does not match the body under ${settings.secretEnv}`,
      );
    }
    const key = deliveryKey(firstHeader(headers, handler.deliveryHeaders), bytes);
    const ledger = this.#o.ledger;
    const replay = {
      status: 200 as const,
      body: { status: "replay" as const, adapter: name, delivery_id: key },
    };
    // A remembered key was a valid JSON delivery when accepted: answer without parsing again.
    if (ledger.has(name, key) && await ledger.claim(name, key) === "seen") return replay;
    let payload: unknown;
    try {
      payload = webhookPayload(bytes, headers.get("content-type"));
    } catch (e) {
      if (!(e instanceof PayloadError)) throw e;
      return fail(400, "invalid_payload", e.message);
    }
    if (await ledger.claim(name, key) === "seen") return replay;
    let hostEvent: HostEvent | undefined;
    try {
      hostEvent = handler.hostEvent?.(payload, headers);
    } catch { /* an event the handler cannot read wakes nothing */ }
    const foreign = hostEvent && this.#o.hostScope?.(name, hostEvent);
    if (foreign) {
      ledger.release(name, key);
      return {
        status: 200,
        body: { status: "ignored", adapter: name, delivery_id: key, reason: foreign },
      };
    }
    try {
      if (hostEvent) this.#o.onHostEvent?.(hostEvent);
    } catch { /* a listener's failure never refuses a delivery */ }
    let items: T[];
    try {
      // The registry holds handlers of any item type; the one registered under `name` yields the
      // items this receiver was made for, and `problem` checks each before it goes further.
      items = handler.tickets(payload, headers, this.#o.context(name)) as T[];
    } catch (e) {
      ledger.release(name, key);
      return fail(
        400,
        "invalid_payload",
        `the ${name} handler cannot read it: ${(e as Error).message}`,
      );
    }
    const problem = this.#o.problem && items.map(this.#o.problem).find((p) => p !== undefined);
    if (problem) {
      ledger.release(name, key);
      return fail(
        400,
        "invalid_payload",
        `a field of the ${name} payload has the wrong type: ${problem}`,
      );
    }
    const outside = items.map((item) => this.#o.scope?.(name, item));
    if (items.length > 0 && outside.every((reason) => reason !== undefined)) {
      ledger.release(name, key);
      return {
        status: 200,
        body: { status: "ignored", adapter: name, delivery_id: key, reason: outside.join("; ") },
      };
    }
    let results: O[];
    try {
      results = await this.#o.sink(items.filter((_, i) => outside[i] === undefined));
      await ledger.commit(name, key);
    } catch (e) {
      ledger.release(name, key);
      return fail(
        500,
        "delivery_not_recorded",
        `${(e as Error).message}; the tracker may redeliver`,
      );
    }
    return {
      status: 200,
      body: { status: "accepted", adapter: name, delivery_id: key, tickets: results },
    };
  }
}

/** The dedup key of a delivery (spec §4.2 rule 4): its id, else the SHA-256 of the raw body. */
function deliveryKey(id: string | null, body: Uint8Array): string {
  const trimmed = id?.trim() ?? "";
  if (trimmed === "") return `sha256:${sha256Hex(body)}`;
  return trimmed.length > MAX_ID_LENGTH ? `id-sha256:${sha256Hex(trimmed)}` : trimmed;
}

function fail(
  status: 400 | 401 | 404 | 413 | 500 | 503,
  code: string,
  message: string,
): WebhookOutcome<never> {
  return { status, body: { error: { code, message } } };
}
