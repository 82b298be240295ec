/**
 * Where HTTP/1.1 request heads start and end in a client's byte stream (pure): the connection
 * gate uses it to time every request head (slowloris defence) without parsing requests itself;
 * the HTTP server behind the gate parses them for real. Bodies are skipped by their
 * `Content-Length` or their chunked framing.
 */
import { concatBytes } from "../util/bytes.ts";

/** Largest request head the gate lets through (hyper refuses larger ones too). */
export const MAX_HEAD_BYTES = 64 * 1024;

type State =
  /** `match`: how much of the `\r\n\r\n` ending a head the bytes so far end with (0–3). */
  | { kind: "head"; parts: Uint8Array[]; size: number; match: number }
  | { kind: "length"; left: number }
  | { kind: "chunk_size"; line: number[] }
  | { kind: "chunk_data"; left: number }
  | { kind: "chunk_crlf"; left: number }
  | { kind: "trailer"; line: number[]; empty: boolean }
  | { kind: "opaque" };

/** What {@link RequestFraming.push} saw in one chunk of bytes. */
export interface FramingStep {
  /** A request head started (its first byte arrived) in this chunk and is still incomplete. */
  headOpen: boolean;
  /** Number of request heads completed in this chunk. */
  headsCompleted: number;
  /** The head grew past {@link MAX_HEAD_BYTES}. */
  headTooLarge: boolean;
}

/** Tracks request boundaries over the bytes a client sends. */
export class RequestFraming {
  #state: State = newHead();

  /** True while a request head has started but not ended. */
  get inHead(): boolean {
    return this.#state.kind === "head" && this.#state.size > 0;
  }

  /** Feed the next bytes from the client. */
  push(bytes: Uint8Array): FramingStep {
    let headsCompleted = 0;
    let headTooLarge = false;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      const s = this.#state;
      switch (s.kind) {
        case "opaque":
          return { headOpen: false, headsCompleted, headTooLarge };
        case "head": {
          if (s.size === 0 && (b === 13 || b === 10)) continue; // stray CRLF between requests
          // Scan to the end of the head (or of the bytes) in one go.
          let m = s.match;
          let j = i;
          for (; j < bytes.length && m < 4; j++) {
            const c = bytes[j];
            if (c === 10) m = m === 1 ? 2 : m === 3 ? 4 : 0;
            else if (c === 13) m = m === 2 ? 3 : 1;
            else m = 0;
          }
          s.parts.push(bytes.slice(i, j));
          s.size += j - i;
          s.match = m;
          if (s.size > MAX_HEAD_BYTES) headTooLarge = true;
          i = j - 1;
          if (m === 4) {
            headsCompleted++;
            this.#state = bodyState(
              decoder.decode(s.parts.length === 1 ? s.parts[0] : concatBytes(s.parts, s.size)),
            );
          }
          break;
        }
        case "length":
          {
            const take = Math.min(s.left, bytes.length - i);
            s.left -= take;
            i += take - 1;
            if (s.left === 0) this.#state = newHead();
          }
          break;
        case "chunk_size":
          if (b === 10) {
            const size = parseInt(
              decoder.decode(new Uint8Array(s.line)).split(";")[0],
              16,
            );
            if (Number.isNaN(size)) this.#state = { kind: "opaque" };
            else if (size === 0) this.#state = { kind: "trailer", line: [], empty: true };
            else this.#state = { kind: "chunk_data", left: size };
          } else if (b !== 13) s.line.push(b);
          break;
        case "chunk_data": {
          const take = Math.min(s.left, bytes.length - i);
          s.left -= take;
          i += take - 1;
          if (s.left === 0) this.#state = { kind: "chunk_crlf", left: 2 };
          break;
        }
        case "chunk_crlf":
          if (--s.left === 0) this.#state = { kind: "chunk_size", line: [] };
          break;
        case "trailer":
          if (b === 10) {
            if (s.empty) this.#state = newHead();
            else this.#state = { kind: "trailer", line: [], empty: true };
          } else if (b !== 13) s.empty = false;
          break;
      }
    }
    return { headOpen: this.inHead, headsCompleted, headTooLarge };
  }
}

const decoder = new TextDecoder();

function newHead(): State {
  return { kind: "head", parts: [], size: 0, match: 0 };
}

function bodyState(head: string): State {
  const lines = head.toLowerCase().split("\r\n");
  if (lines.some((l) => l.startsWith("upgrade:"))) return { kind: "opaque" };
  const te = lines.find((l) => l.startsWith("transfer-encoding:"));
  if (te && te.includes("chunked")) return { kind: "chunk_size", line: [] };
  const cl = lines.find((l) => l.startsWith("content-length:"));
  const length = cl ? Number(cl.slice("content-length:".length).trim()) : 0;
  if (!Number.isSafeInteger(length) || length < 0) return { kind: "opaque" };
  return length > 0 ? { kind: "length", left: length } : newHead();
}
