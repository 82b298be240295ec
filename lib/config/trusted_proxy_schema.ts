/**
 * `server.trusted_proxy` (docs/kubernetes.md "Single sign-on"): a single sign-on proxy such as
 * oauth2-proxy in front of the board. The user it signed in is taken from its header only for
 * requests that come through a listener of their own on a loopback port (the proxy runs beside
 * the service, a sidecar) and carry the proxy's shared secret; anywhere else that header is
 * refused, so nobody can name themselves by sending it.
 */
import { z } from "zod";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER = /^[A-Za-z0-9][A-Za-z0-9-]*$/;

/** `server.trusted_proxy`. */
export const TrustedProxySchema = z.strictObject({
  /** The loopback port the proxy forwards to (127.0.0.1 only; the public port never trusts it). */
  port: z.number().int().min(1).max(65535),
  /** The header naming the signed-in user: the principal of review actions and receipts. */
  user_header: z.string().regex(HEADER, "must be an HTTP header name").default("X-Forwarded-User"),
  /** The variable holding the secret the proxy sends in `secret_header` (read per request). */
  secret_env: z.string().regex(ENV_NAME, "must be an environment variable name"),
  secret_header: z.string().regex(HEADER, "must be an HTTP header name")
    .default("X-Service-Proxy-Secret"),
  /** What the proxy's users may do (review actions need operator). */
  scope: z.enum(["reader", "operator"]).default("operator"),
});

/** The validated `server.trusted_proxy` block. */
export type TrustedProxyBlock = z.output<typeof TrustedProxySchema>;
