/**
 * Who a request through the trusted single sign-on proxy is (docs/kubernetes.md "Single
 * sign-on"; `server.trusted_proxy`). Pure: the listener it came through, its headers and the
 * shared secret in, a principal or the refusal out. The proxy's user header is believed only on
 * the proxy's own loopback listener and only with the secret the proxy alone holds (a process
 * beside the service that can reach loopback still lacks it); on any other listener a request
 * carrying that header is refused, so nobody names themselves by sending it.
 */
import { constantTimeEqual } from "../journal/hash.ts";
import { UserFacingError } from "../errors.ts";
import type { Principal } from "./tokens.ts";

/** What the proxy is configured with (`server.trusted_proxy` of lib/config). */
export interface TrustedProxyBlock {
  user_header: string;
  secret_env: string;
  secret_header: string;
  scope: "reader" | "operator";
}

/** A refusal, with the status it is answered with. */
export interface ProxyRefusal {
  status: 400 | 401 | 403;
  code: string;
  message: string;
}

/** The longest user name a receipt takes. */
const MAX_USER = 256;

/** The principal the proxy names for a request through its listener, or why not. */
export function proxyPrincipal(
  proxy: TrustedProxyBlock,
  header: (name: string) => string | undefined,
  env: (name: string) => string | undefined,
): { ok: true; principal: Principal } | ({ ok: false } & ProxyRefusal) {
  const secret = env(proxy.secret_env);
  const sent = header(proxy.secret_header);
  if (!secret || !sent || !constantTimeEqual(sent, secret)) {
    return {
      ok: false,
      status: 401,
      code: "unauthorized",
      message:
        `this is the single sign-on proxy's address: a request needs its ${proxy.secret_header}`,
    };
  }
  const user = header(proxy.user_header)?.trim();
  if (!user) {
    return {
      ok: false,
      status: 401,
      code: "unauthorized",
      message: `not signed in: the proxy sent no ${proxy.user_header}`,
    };
  }
  // deno-lint-ignore no-control-regex
  if (user.length > MAX_USER || /[\u0000-\u001f\u007f-\u009f]/.test(user)) {
    return {
      ok: false,
      status: 400,
      code: "invalid_user",
      message: `${proxy.user_header} must be at most ${MAX_USER} printable characters`,
    };
  }
  return { ok: true, principal: { principal: user, scope: proxy.scope } };
}

/** A request not through the proxy that carries its user header: refused. */
export function untrustedUserHeader(
  proxy: TrustedProxyBlock | undefined,
  header: (name: string) => string | undefined,
): ProxyRefusal | undefined {
  if (!proxy || header(proxy.user_header) === undefined) return undefined;
  return {
    status: 403,
    code: "untrusted_user_header",
    message: `${proxy.user_header} is taken only from the single sign-on proxy's own listener ` +
      "(server.trusted_proxy); this request did not come through it",
  };
}

/** `server.trusted_proxy` names a secret variable that is unset: the server does not start. */
export function assertProxySecretSet(
  proxy: TrustedProxyBlock | undefined,
  env: (name: string) => string | undefined,
): void {
  if (!proxy || env(proxy.secret_env)?.trim()) return;
  throw new UserFacingError(
    `server.trusted_proxy.secret_env names ${proxy.secret_env}, which is unset or empty: the ` +
      "proxy's requests could not be told from anyone else's",
    1,
    `export ${proxy.secret_env}=<the secret the proxy sends in ${proxy.secret_header}>`,
  );
}
