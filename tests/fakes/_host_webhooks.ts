/**
 * Webhook deliveries of the fake code hosts (github_api.ts, gitlab_api.ts), as the real hosts send
 * them: a JSON body POSTed to the configured URL with the host's event, delivery-id and signature
 * headers (GitHub: `X-Hub-Signature-256: sha256=<HMAC-SHA256 hex>`; GitLab: the secret token in
 * `X-Gitlab-Token`). Deliveries go out one at a time in the order the events happened; each is
 * logged with the fake's clock and the status the receiver answered.
 */
import { createHmac } from "node:crypto";

/** Where deliveries go, and the shared secret they are signed (GitHub) or sent (GitLab) with. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** One delivery made. */
export interface Delivery {
  /** The fake's clock when it was sent. */
  at: number;
  event: string;
  status: number;
}

/** The headers of one delivery of `event` with `body`, in a host's format. */
export type DeliveryHeaders = (
  event: string,
  body: string,
  secret: string,
  id: string,
) => Record<string, string>;

/** GitHub's delivery headers. */
export const githubHeaders: DeliveryHeaders = (event, body, secret, id) => ({
  "content-type": "application/json",
  "user-agent": "GitHub-Hookshot/fake",
  "x-github-event": event,
  "x-github-delivery": id,
  "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
});

/** GitLab's delivery headers (`event` is the hook's name, e.g. `Merge Request Hook`). */
export const gitlabHeaders: DeliveryHeaders = (event, _body, secret, id) => ({
  "content-type": "application/json",
  "user-agent": "GitLab/fake",
  "x-gitlab-event": event,
  "x-gitlab-event-uuid": id,
  "idempotency-key": id,
  "x-gitlab-token": secret,
});

/** Sends a fake host's webhook deliveries, in order. */
export class WebhookSender {
  readonly delivered: Delivery[] = [];
  #target: WebhookTarget | undefined;
  #chain: Promise<void> = Promise.resolve();
  readonly #headers: DeliveryHeaders;

  constructor(headers: DeliveryHeaders) {
    this.#headers = headers;
  }

  /** Deliver to `target` from now on (undefined: no webhook configured). */
  setTarget(target: WebhookTarget | undefined): void {
    this.#target = target;
  }

  /**
   * Queue a delivery of `event` (nothing when no webhook is configured); a payload still being
   * put together is awaited in turn, so deliveries keep the order of the events.
   */
  send(event: string, payload: unknown): void {
    const target = this.#target;
    if (!target) return;
    const ready = Promise.resolve(payload);
    this.#chain = this.#chain.then(async () => {
      const body = JSON.stringify(await ready.catch(() => ({})));
      const at = Date.now();
      let status = 0;
      try {
        const res = await fetch(target.url, {
          method: "POST",
          headers: this.#headers(event, body, target.secret, crypto.randomUUID()),
          body,
        });
        await res.body?.cancel();
        status = res.status;
      } catch { /* the receiver is gone: a host retries later, the fake does not */ }
      this.delivered.push({ at, event, status });
    });
  }

  /** Resolves once every delivery queued so far was made. */
  settled(): Promise<void> {
    return this.#chain;
  }
}
