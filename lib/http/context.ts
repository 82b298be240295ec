/** What every route handler can reach: the workspace, auth and audit settings. */
import type { Context } from "hono";
import type { AuthVariables } from "./bearer_auth.ts";
import type { BoundedBodyVariables } from "./body_limit.ts";
import type { TokenSpec } from "../auth/tokens.ts";
import type { OriginPolicy } from "./origin_guard.ts";
import type { WorkspacePaths } from "../workspace.ts";
import type { ServerIdentity } from "../discovery/identity.ts";
import type { TrustedProxyBlock } from "../auth/trusted_proxy.ts";

/** Server-wide settings, built once at start. */
export interface AppContext {
  paths: WorkspacePaths;
  /** Token specs in force (read per request so SERVICE_TOKEN rotation needs no restart). */
  tokenSpecs: () => TokenSpec[];
  /** The audit HMAC key (created on first use). */
  auditKey: () => Promise<Uint8Array>;
  /** Wall clock for envelopes (tests pin it). */
  now?: () => Date;
  /** Which hosts and browser origins may call the server (default: loopback on 127.0.0.1). */
  origin?: OriginPolicy;
  /** Connection counters of the gate in front of the server (set once it listens). */
  connections?: () => Record<string, number>;
  /** Most `/events` streams open at once (`server.max_event_streams`). */
  maxEventStreams?: number;
  /** What the server proves at `GET /identity` (set by a listening server). */
  identity?: ServerIdentity;
  /** The agents' listener of a listening task server (lib/server/listen.ts). */
  agentUrl?: string;
  /** Aborted when the server begins to shut down: long-lived streams (`/events`) end on it. */
  closing?: AbortSignal;
  /** `server.trusted_proxy`: a single sign-on proxy whose user header names the principal. */
  trustedProxy?: TrustedProxyBlock & { port: number };
  /** When the server's background tick last finished and how often it is due (`/healthz`). */
  ticked?: { at: number; everyMs: number };
}

/** Hono environment of the service. */
export interface AppEnv {
  Variables: AuthVariables & BoundedBodyVariables & { app: AppContext };
}

/** A handler's context. */
export type Ctx = Context<AppEnv>;
