/** YAML text with positions: parse once, then name the line and column of any key path. */
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import type { Node } from "yaml";

/** A 1-based line and column in a YAML file. */
export interface Position {
  line: number;
  col: number;
}

/** Thrown when YAML text does not parse; carries the position of the first error. */
export class YamlSyntaxError extends Error {
  constructor(readonly file: string, readonly position: Position, detail: string) {
    super(`${file}:${position.line}:${position.col}: not valid YAML: ${detail}`);
    this.name = "YamlSyntaxError";
  }
}

/** A parsed YAML document that can locate key paths. */
export interface YamlSource {
  file: string;
  value: unknown;
  /** Position of the node at `path`, or of its deepest existing ancestor. */
  locate(path: readonly PropertyKey[], options?: { key?: boolean }): Position;
}

/** Parse `text` (read from `file`), keeping positions for error messages. */
export function parseYamlSource(file: string, text: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const pos = lineCounter.linePos(err.pos[0]);
    throw new YamlSyntaxError(file, pos, err.message.split("\n")[0]);
  }
  const at = (offset: number | undefined): Position =>
    offset === undefined ? { line: 1, col: 1 } : lineCounter.linePos(offset);
  return {
    file,
    value: doc.toJS() ?? null,
    locate(path, options = {}) {
      let node: unknown = doc.contents;
      let best: Position = at((node as Node | null)?.range?.[0]);
      for (let i = 0; i < path.length; i++) {
        const step = path[i];
        if (isMap(node)) {
          const pair = node.items.find((p) =>
            isScalar(p.key) && String(p.key.value) === String(step)
          );
          if (!pair) return best;
          const last = i === path.length - 1;
          const keyNode = pair.key as Node;
          best = at(keyNode.range?.[0]);
          if (last && options.key) return best;
          node = pair.value;
          if ((node as Node | null)?.range) best = at((node as Node).range![0]);
        } else if (isSeq(node) && typeof step === "number") {
          node = node.items[step];
          if (!node) return best;
          if ((node as Node).range) best = at((node as Node).range![0]);
        } else {
          return best;
        }
      }
      return best;
    },
  };
}
