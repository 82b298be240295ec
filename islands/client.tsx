/**
 * The islands bundle's entry: hydrate every server-rendered island marker
 * (`<div data-island="Name" data-props="{…}">`) with the component of that name.
 */
import { hydrate } from "preact";
import type { FunctionComponent } from "preact";
import { BoardApp } from "./board_app.tsx";

// deno-lint-ignore no-explicit-any
const ISLANDS: Record<string, FunctionComponent<any>> = { BoardApp };

for (const element of document.querySelectorAll<HTMLElement>("[data-island]")) {
  const Island = ISLANDS[element.dataset.island ?? ""];
  if (!Island) continue;
  hydrate(<Island {...JSON.parse(element.dataset.props ?? "{}")} />, element);
}
