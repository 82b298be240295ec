/**
 * The handler registry (spec §4.2 rule 6, `register_handler`): the built-in trackers register
 * here when lib/trackers/builtin.ts is imported, and so can any module, at import time. A
 * module named by `trackers.<name>.module` (a path relative to the workspace, or an `npm:` /
 * `jsr:` / URL specifier) is imported on start; it either calls {@link registerHandler} itself
 * or default-exports a {@link WebhookHandler}, which is registered under the configured name.
 */
import type { WebhookHandler } from "./handler.ts";
import { userModuleUrl } from "../util/user_module.ts";

const handlers = new Map<string, WebhookHandler>();

/** Adapter names: lower-case letters, digits and `_` (as `trackers.<name>` keys). */
const ADAPTER_NAME = /^[a-z][a-z0-9_]*$/;

/** A handler module that could not be loaded or did not provide a handler. */
class HandlerModuleError extends Error {
  readonly code = "handler_module";
  constructor(message: string) {
    super(message);
    this.name = "HandlerModuleError";
  }
}

/** Register (or replace) the webhook handler of adapter `name`. */
export function registerHandler(name: string, handler: WebhookHandler): void {
  if (!ADAPTER_NAME.test(name)) {
    throw new HandlerModuleError(
      `cannot register tracker ${JSON.stringify(name)}: names are lower-case letters, digits and _`,
    );
  }
  const problem = handlerProblem(handler);
  if (problem) throw new HandlerModuleError(`cannot register tracker ${name}: ${problem}`);
  handlers.set(name, handler);
}

/** The handler of `name`, if any. */
export function handlerFor(name: string): WebhookHandler | undefined {
  return handlers.get(name);
}

/** Every registered adapter name, sorted. */
export function registeredNames(): string[] {
  return [...handlers.keys()].sort();
}

// Modules written for a bundled service cannot import this file: they find it here instead.
(globalThis as Record<symbol, unknown>)[Symbol.for("service.registerHandler")] = registerHandler;

/**
 * Import the handler module `specifier` for adapter `name` (paths resolve against `root`) and
 * make sure a handler is registered under `name` afterwards.
 */
export async function loadHandlerModule(
  name: string,
  specifier: string,
  root: string,
): Promise<void> {
  const url = userModuleUrl(specifier, root);
  let mod: Record<string, unknown>;
  try {
    mod = await import(url);
  } catch (e) {
    throw new HandlerModuleError(
      `trackers.${name}.module: cannot import ${specifier}: ${(e as Error).message}`,
    );
  }
  if (handlers.has(name)) return;
  const candidate = mod.default ?? mod.handler;
  const problem = handlerProblem(candidate);
  if (problem) {
    throw new HandlerModuleError(
      `trackers.${name}.module: ${specifier} neither called registerHandler("${name}", …) nor ` +
        `exported a handler as default (${problem})`,
    );
  }
  handlers.set(name, candidate as WebhookHandler);
}

function handlerProblem(value: unknown): string | undefined {
  if (!value || typeof value !== "object") return "not an object";
  const h = value as Partial<WebhookHandler>;
  if (!["hub-sha256", "raw-hex", "token"].includes(h.scheme as string)) {
    return 'scheme must be "hub-sha256", "raw-hex" or "token"';
  }
  if (!Array.isArray(h.signatureHeaders) || h.signatureHeaders.length === 0) {
    return "signatureHeaders must list at least one header";
  }
  if (!Array.isArray(h.deliveryHeaders)) return "deliveryHeaders must be a list";
  if (typeof h.tickets !== "function") return "tickets(payload, headers, context) is missing";
  return undefined;
}
