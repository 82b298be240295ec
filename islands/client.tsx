/**
 * The islands bundle's entry: hydrate every server-rendered island marker
 * (`<div data-island="Name" data-props="{…}">`) with the component of that name. The document's
 * `load` waits until the board app shows its first answer (lib/dashboard/load_hold.ts).
 */
import { hydrate } from "preact";
import type { FunctionComponent } from "preact";
import { holdLoadEvent } from "../lib/dashboard/load_hold.ts";
import { BoardApp } from "./board_app.tsx";

const releaseLoad = holdLoadEvent();

// deno-lint-ignore no-explicit-any
const ISLANDS: Record<string, FunctionComponent<any>> = { BoardApp };

for (const element of document.querySelectorAll<HTMLElement>("[data-island]")) {
  const Island = ISLANDS[element.dataset.island ?? ""];
  if (!Island) continue;
  hydrate(
    <Island {...JSON.parse(element.dataset.props ?? "{}")} onShown={releaseLoad} />,
    element,
  );
}
