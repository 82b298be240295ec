/** The marker around an island's server render: `islands/client.tsx` hydrates it by name. */
import type { ComponentChildren } from "preact";

/** Props of {@link Island}. */
export interface IslandProps {
  /** The island's name in `islands/client.tsx`. */
  name: string;
  /** Serialisable props, passed again to the island when it hydrates. */
  props: Record<string, string | number | boolean | null>;
  children: ComponentChildren;
}

/** Wrap an island's server-rendered markup with its name and props. */
export function Island({ name, props, children }: IslandProps) {
  return (
    <div data-island={name} data-props={JSON.stringify(props)}>
      {children}
    </div>
  );
}
