/**
 * Text an agent or its tools wrote (its summary, a reason it gave, a gate's output, its log) as
 * the board shows it: the controls that reorder text shown, not obeyed
 * (lib/dashboard/bidi_controls.ts), and inside `<bdi>`, so its direction cannot turn the words
 * around it.
 */
import { showBidiControls } from "../../lib/dashboard/bidi_controls.ts";

/** Props of {@link AgentText}. */
export interface AgentTextProps {
  text: string;
}

/** `text` isolated, its reordering controls visible. */
export function AgentText({ text }: AgentTextProps) {
  return <bdi>{showBidiControls(text)}</bdi>;
}
