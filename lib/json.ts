/**
 * The JSON value type, in a module of its own that imports nothing: the board's wire types
 * (and through them the browser bundle) name it without reaching the journal.
 */

/** A JSON value: what `JSON.parse` returns and canonical JSON can encode. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
