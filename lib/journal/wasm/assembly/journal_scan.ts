// AssemblyScript source of the journal fast path (built by `deno task build:wasm` into
// ../journal_scan_wasm.ts; lib/journal/bulk_verify.ts drives it).
//
// scan() takes a window of whole journal lines and accepts the longest run of leading lines that
// provably verify (DESIGN.md §4): each line is *already* canonical JSON (DESIGN.md §3, as
// lib/journal/canonical_json.ts writes it) of exactly {data, hash, prev, seq, ts, type, v}, its
// seq is the next one, its prev is the previous row's hash, and SHA-256 of the line without its
// `,"hash":"…"` member is its hash. A line it cannot prove — not canonical in every byte, a key
// with an escape, a number of 16 digits or more, nesting deeper than MAX_DEPTH, a bad digest —
// simply ends the run: the JavaScript verifier takes that line and reports exactly why, or
// verifies it the slow way. So this code only ever says "yes, proven" or "not proven here".
//
// The SHA-256 runs on four messages at once, one per lane of an i32x4.

// ---- fixed memory (below --memoryBase, which holds the static data) ----
const K_TABLE: usize = 1024; // 64 x v128: each round constant in all four lanes
const W_BUF: usize = 2048; // 64 x v128: message schedule of the four blocks in flight
const LANE_BLOCK: usize = 3072; // 4 x 64 bytes: blocks assembled for a lane (hole, padding)
const STATE: usize = 3328; // 8 x v128: a..h of the four lanes
/** The head the first line of a window must chain onto (64 hex digits), updated by scan(). */
const HEAD: usize = 3456;
/** What the reader needs of each row type id (1..MAX_TYPES), one byte each (see scan). */
const NEEDS: usize = 3584;
/** The row types seen so far: MAX_TYPES entries of TYPE_ENTRY bytes, [length, name...]. */
const TYPE_TABLE: usize = 4096;
const TYPE_ENTRY: usize = 64;
const MAX_TYPES: i32 = 63;
let typeCount: i32 = 0;
/**
 * Where the JavaScript side puts a window: lines, then 64 bytes of slack for wide loads. Above
 * the static data (from 64 KiB) and the few bytes the stub runtime allocates at start-up.
 */
const WINDOW: usize = 1 << 20;

const RECORD_BYTES: usize = 32; // per line: 8 x u32 (see scan)
const MAX_DEPTH: i32 = 64;
const MAX_DIGITS: i32 = 15; // |n| < 10^15 is a safe integer in JavaScript
const HOLE: u32 = 74; // ,"hash":" + 64 hex + "

const K: StaticArray<u32> = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];
const IV: StaticArray<u32> = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

export function init(): void {
  for (let i = 0; i < 64; i++) v128.store(K_TABLE + (<usize>i << 4), i32x4.splat(K[i]));
}

/** The address of the head's 64 hex digits (the JavaScript side writes and reads them). */
export function headAddress(): usize {
  return HEAD;
}

/** The address of the per-type needs (the JavaScript side writes them before each scan). */
export function needsAddress(): usize {
  return NEEDS;
}

/**
 * Register a row type whose name (ASCII, at most TYPE_ENTRY - 1 bytes) was written at the given
 * entry of the table; returns its id, or 0 when the table is full.
 */
export function addType(length: u32): i32 {
  if (typeCount >= MAX_TYPES || length >= <u32>TYPE_ENTRY) return 0;
  store<u8>(TYPE_TABLE + <usize>typeCount * TYPE_ENTRY, <u8>length);
  return ++typeCount;
}

/** Where the next type's name goes (after its length byte). */
export function nextTypeAddress(): usize {
  return TYPE_TABLE + <usize>typeCount * TYPE_ENTRY + 1;
}

/** The id of the type named by the raw bytes [p, end), or 0 when it is not registered. */
function typeId(p: usize, end: usize): i32 {
  const length = end - p;
  for (let id = 1; id <= typeCount; id++) {
    const entry = TYPE_TABLE + <usize>(id - 1) * TYPE_ENTRY;
    if (<usize>load<u8>(entry) != length) continue;
    let i: usize = 0;
    while (i < length && load<u8>(entry + 1 + i) == load<u8>(p + i)) i++;
    if (i == length) return id;
  }
  return 0;
}

// What a reader needs of a row (NEEDS and scan's `otherwise`).
const NEED_NOTHING: u8 = 0;
const NEED_TASK_ID: u8 = 1;
const NEED_DATA: u8 = 2;

/** Where the next proven row's wanted text goes (see scan). */
let compactAt: usize = 0;

@inline function appendCompact(from: usize, to: usize): void {
  memory.copy(compactAt, from, to - from);
  compactAt += to - from;
}

/** The address of the window (the JavaScript side copies lines there). */
export function windowAddress(): usize {
  return WINDOW;
}

// ---- canonical JSON, proven byte by byte ----

// Byte classes of what a canonical string may hold raw: printable ASCII except " and \.
const SPACE = i8x16.splat(0x20);
const TILDE = i8x16.splat(0x7e);
const QUOTE = i8x16.splat(0x22);
const BACKSLASH = i8x16.splat(0x5c);

/** Index of the first byte at or after p that a string cannot hold raw (16 bytes a step). */
@inline function skipPlain(p: usize): usize {
  while (true) {
    const v = v128.load(p);
    const special = v128.or(
      v128.or(i8x16.lt_u(v, SPACE), i8x16.gt_u(v, TILDE)),
      v128.or(i8x16.eq(v, QUOTE), i8x16.eq(v, BACKSLASH)),
    );
    const mask = i8x16.bitmask(special);
    if (mask != 0) return p + <usize>ctz(mask);
    p += 16;
  }
}

@inline function hexValue(c: u32): i32 {
  if (c - 0x30 < 10) return <i32>(c - 0x30);
  if (c - 0x61 < 6) return <i32>(c - 0x61 + 10);
  return -1; // upper case is not canonical
}

/**
 * A canonical string starting at its opening quote p; returns the index after the closing quote,
 * or 0. With noEscapes (keys), any escape is "not proven here".
 */
function str(p: usize, noEscapes: bool): usize {
  p++;
  while (true) {
    p = skipPlain(p);
    const c = load<u8>(p);
    if (c == 0x22) return p + 1;
    if (c != 0x5c || noEscapes) return 0; // control, DEL, non-ASCII, or an escape in a key
    const e = load<u8>(p + 1);
    if (e == 0x75) {
      let u: i32 = 0;
      for (let i: usize = 2; i < 6; i++) {
        const h = hexValue(load<u8>(p + i));
        if (h < 0) return 0;
        u = (u << 4) | h;
      }
      // \u is canonical only for what has no shorter form: controls without a short escape,
      // DEL and everything above it.
      if (u >= 0x20 && u < 0x7f) return 0;
      if (u == 0x08 || u == 0x09 || u == 0x0a || u == 0x0c || u == 0x0d) return 0;
      p += 6;
    } else if (
      e == 0x22 || e == 0x5c || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74
    ) {
      p += 2;
    } else {
      return 0; // \/ and anything else
    }
  }
}

/** A canonical integer at p (no fraction, no exponent, no -0, at most MAX_DIGITS digits). */
function int(p: usize): usize {
  if (load<u8>(p) == 0x2d) p++;
  const first = load<u8>(p);
  if (first == 0x30) {
    return load<u8>(p - 1) == 0x2d ? 0 : p + 1;
  }
  if (<u32>first - 0x31 >= 9) return 0;
  const start = p;
  while (<u32>load<u8>(p) - 0x30 < 10) p++;
  return p - start > <usize>MAX_DIGITS ? 0 : p;
}

@inline function literal(p: usize, word: u32, length: usize): usize {
  // word holds the literal's bytes little-endian; "true"/"null" are 4 bytes, "false" 5.
  if (length == 4) return load<u32>(p) == word ? p + 4 : 0;
  return load<u32>(p) == word && load<u8>(p + 4) == 0x65 ? p + 5 : 0;
}

/** The need of unregistered types and the compact buffer of the current scan. */
let otherwiseNeed: u8 = NEED_DATA;
let compactBase: usize = 0;

/** Where data's top-level "task_id" string sits (quotes included), when it has one. */
let taskIdStart: usize = 0;
let taskIdEnd: usize = 0;

/** Compare two raw keys by bytes (= by code point: they are ASCII); negative when a < b. */
function compareKeys(a: usize, aLength: usize, b: usize, bLength: usize): i32 {
  const n = aLength < bLength ? aLength : bLength;
  for (let i: usize = 0; i < n; i++) {
    const x = load<u8>(a + i);
    const y = load<u8>(b + i);
    if (x != y) return <i32>x - <i32>y;
  }
  return <i32>aLength - <i32>bLength;
}

/** A canonical value at p; returns the index after it, or 0. */
function value(p: usize, depth: i32): usize {
  const c = load<u8>(p);
  if (c == 0x22) return str(p, false);
  if (c == 0x7b) return object(p, depth);
  if (c == 0x5b) {
    if (depth >= MAX_DEPTH) return 0;
    p++;
    if (load<u8>(p) == 0x5d) return p + 1;
    while (true) {
      p = value(p, depth + 1);
      if (p == 0) return 0;
      const next = load<u8>(p);
      if (next == 0x5d) return p + 1;
      if (next != 0x2c) return 0;
      p++;
    }
  }
  if (c == 0x74) return literal(p, 0x65757274, 4); // true
  if (c == 0x6e) return literal(p, 0x6c6c756e, 4); // null
  if (c == 0x66) return literal(p, 0x736c6166, 5); // false
  return int(p);
}

/** A canonical object at p: keys strictly ascending (so no duplicates), raw ASCII only. */
function object(p: usize, depth: i32): usize {
  if (depth >= MAX_DEPTH) return 0;
  p++;
  if (load<u8>(p) == 0x7d) return p + 1;
  let previousKey: usize = 0;
  let previousLength: usize = 0;
  while (true) {
    if (load<u8>(p) != 0x22) return 0;
    const keyEnd = str(p, true);
    if (keyEnd == 0) return 0;
    const key = p + 1;
    const keyLength = keyEnd - 1 - key;
    if (previousKey != 0 && compareKeys(previousKey, previousLength, key, keyLength) >= 0) {
      return 0;
    }
    previousKey = key;
    previousLength = keyLength;
    p = keyEnd;
    if (load<u8>(p) != 0x3a) return 0;
    p++;
    const valueStart = p;
    p = value(p, depth + 1);
    if (p == 0) return 0;
    // "task_id" as 7 bytes: the fold reads it from most rows, so it is located here.
    if (
      depth == 0 && keyLength == 7 && load<u32>(key) == 0x6b736174 &&
      load<u16>(key + 4) == 0x695f && load<u8>(key + 6) == 0x64 && load<u8>(valueStart) == 0x22
    ) {
      taskIdStart = valueStart;
      taskIdEnd = p;
    }
    const next = load<u8>(p);
    if (next == 0x7d) return p + 1;
    if (next != 0x2c) return 0;
    p++;
  }
}

const DIGIT_0 = i8x16.splat(0x30);
const DIGIT_9 = i8x16.splat(0x39);
const LETTER_A = i8x16.splat(0x61);
const LETTER_F = i8x16.splat(0x66);
const LETTER_OFFSET = i8x16.splat(0x57); // 'a' - 10
const LOW_BYTE = i16x8.splat(0x00ff);

/** 64 lower-case hex digits at p into 32 bytes at out, 16 digits a step; false if not hex. */
function hex64(p: usize, out: usize): bool {
  let bad = i8x16.splat(0);
  for (let k: usize = 0; k < 64; k += 32) {
    const a = v128.load(p + k);
    const b = v128.load(p + k + 16);
    const aDigit = v128.and(i8x16.ge_u(a, DIGIT_0), i8x16.le_u(a, DIGIT_9));
    const bDigit = v128.and(i8x16.ge_u(b, DIGIT_0), i8x16.le_u(b, DIGIT_9));
    const aLetter = v128.and(i8x16.ge_u(a, LETTER_A), i8x16.le_u(a, LETTER_F));
    const bLetter = v128.and(i8x16.ge_u(b, LETTER_A), i8x16.le_u(b, LETTER_F));
    bad = v128.or(bad, v128.not(v128.and(v128.or(aDigit, aLetter), v128.or(bDigit, bLetter))));
    const aNibble = v128.bitselect(i8x16.sub(a, DIGIT_0), i8x16.sub(a, LETTER_OFFSET), aDigit);
    const bNibble = v128.bitselect(i8x16.sub(b, DIGIT_0), i8x16.sub(b, LETTER_OFFSET), bDigit);
    // Pairs of digits as 16-bit lanes: first digit in the low byte (the high nibble).
    const aPair = v128.or(i16x8.shl(v128.and(aNibble, LOW_BYTE), 4), i16x8.shr_u(aNibble, 8));
    const bPair = v128.or(i16x8.shl(v128.and(bNibble, LOW_BYTE), 4), i16x8.shr_u(bNibble, 8));
    v128.store(out + (k >> 1), i8x16.narrow_i16x8_u(aPair, bPair));
  }
  return !v128.any_true(bad);
}

/** Whether the 64 bytes at a and b are equal. */
function equal64(a: usize, b: usize): bool {
  const diff = v128.or(
    v128.or(v128.xor(v128.load(a), v128.load(b)), v128.xor(v128.load(a, 16), v128.load(b, 16))),
    v128.or(v128.xor(v128.load(a, 32), v128.load(b, 32)), v128.xor(v128.load(a, 48), v128.load(b, 48))),
  );
  return !v128.any_true(diff);
}

// The fixed parts of a row, as little-endian words (`{"data":` is 7b 22 64 61 74 61 22 3a).
const DATA_KEY: u64 = 0x3a2261746164227b; // {"data":
const HASH_KEY: u64 = 0x3a2268736168222c; // ,"hash":  then "
const PREV_KEY: u64 = 0x2276657270222c22; // ","prev  then ":"
const SEQ_KEY: u64 = 0x3a22716573222c22; // ","seq":
const TS_KEY: u64 = 0x223a227374222c; // ,"ts":"  (7 bytes)
const TYPE_KEY: u64 = 0x3a2265707974222c; // ,"type":  then "
const V_KEY: u64 = 0x3a2276222c; // ,"v":  (5 bytes)

/** The decimal value of the canonical integer at [p, end). */
function intValue(p: usize, end: usize): i64 {
  let negative = false;
  if (load<u8>(p) == 0x2d) {
    negative = true;
    p++;
  }
  let n: i64 = 0;
  while (p < end) n = n * 10 + <i64>(load<u8>(p++) - 0x30);
  return negative ? -n : n;
}

/**
 * Prove the line at p canonical and chained at `seq` onto the hash whose 64 hex digits are at
 * `prev`; on success fill its record and its claimed hash (32 bytes at `claimed`) and return the
 * index after its newline, else 0. Every rule stops at the newline, so a line is never read past
 * its end (wide loads may look into the slack after it, never decide on it).
 */
function proveLine(p: usize, seq: i64, prev: usize, record: usize, claimed: usize): usize {
  const start = p;
  if (load<u64>(p) != DATA_KEY || load<u8>(p + 8) != 0x7b) return 0;
  p += 8;
  const dataStart = p;
  taskIdStart = 0;
  taskIdEnd = 0;
  p = object(p, 0);
  if (p == 0) return 0;
  const dataEnd = p;
  if (load<u64>(p) != HASH_KEY || load<u8>(p + 8) != 0x22 || !hex64(p + 9, claimed)) return 0;
  p += 9 + 64;
  if (load<u64>(p) != PREV_KEY || load<u16>(p + 8) != 0x223a || !equal64(p + 10, prev)) return 0;
  p += 10 + 64;
  if (load<u64>(p) != SEQ_KEY) return 0;
  p += 8;
  const seqEnd = int(p);
  if (seqEnd == 0 || intValue(p, seqEnd) != seq) return 0;
  p = seqEnd;
  if ((load<u64>(p) & 0x00ffffffffffffff) != TS_KEY) return 0;
  p = str(p + 6, false);
  if (p == 0 || load<u64>(p) != TYPE_KEY || load<u8>(p + 8) != 0x22) return 0;
  const typeStart = p + 8;
  p = str(typeStart, false);
  if (p == 0) return 0;
  const typeEnd = p;
  if ((load<u64>(p) & 0xffffffffff) != V_KEY) return 0;
  p = int(p + 5);
  if (p == 0 || load<u8>(p) != 0x7d || load<u8>(p + 1) != 0x0a) return 0;
  const newline = p + 1;
  // The text the reader wants of this row goes to the compact buffer: the type's (quoted) when
  // it is not registered, then all of data, its task_id (quoted), or nothing.
  const id = typeId(typeStart + 1, typeEnd - 1);
  const need = id == 0 ? otherwiseNeed : load<u8>(NEEDS + <usize>id);
  const textStart = compactAt;
  if (id == 0) appendCompact(typeStart, typeEnd);
  const wantedStart = compactAt;
  if (need == NEED_DATA) appendCompact(dataStart, dataEnd);
  else if (need == NEED_TASK_ID && taskIdStart != 0) appendCompact(taskIdStart, taskIdEnd);
  store<u32>(record, <u32>(start - WINDOW));
  store<u32>(record, <u32>(newline - WINDOW), 4);
  store<u32>(record, <u32>(dataStart - WINDOW), 8);
  store<u32>(record, <u32>(dataEnd - WINDOW), 12);
  store<u32>(record, <u32>id | (<u32>need << 8), 16);
  store<u32>(record, <u32>(textStart - compactBase), 20);
  store<u32>(record, <u32>(wantedStart - compactBase), 24);
  store<u32>(record, <u32>(compactAt - compactBase), 28);
  return newline + 1;
}

/** Where the hash digits of the line of `record` are (just after `,"hash":"`). */
@inline function hashDigits(record: usize): usize {
  return WINDOW + <usize>load<u32>(record, 12) + 9;
}

// ---- SHA-256, four messages at a time ----
//
// A row's message is its line with the 74-byte `,"hash":"…"` member cut out: bytes [start,
// dataEnd) then [dataEnd + 74, newline). Blocks entirely on one side of the cut are hashed in
// place; the block that spans the cut and the last ones (with the padding) are assembled.

const laneRow = new StaticArray<i32>(4);
const laneBlock = new StaticArray<u32>(4);
const laneBlocks = new StaticArray<u32>(4);
const lanePointer = new StaticArray<usize>(4);
const BSWAP: v128 = i8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);

@inline function rotr(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n));
}

/** Copy message bytes [from, to) of the row at `record` to dst. */
function copyMessage(dst: usize, record: usize, from: u32, to: u32): void {
  const start = WINDOW + <usize>load<u32>(record);
  const cut = <u32>(WINDOW + <usize>load<u32>(record, 12) - start);
  if (from < cut) {
    const end = to < cut ? to : cut;
    memory.copy(dst, start + from, end - from);
    dst += end - from;
    from = end;
  }
  if (from < to) memory.copy(dst, start + from + HOLE, to - from);
}

/** Point lane L at block b of its row, assembling it when it is not contiguous in place. */
function pointLane(L: i32, records: usize): void {
  const record = records + <usize>laneRow[L] * RECORD_BYTES;
  const start = WINDOW + <usize>load<u32>(record);
  const length = load<u32>(record, 4) - load<u32>(record) - HOLE;
  const cut = load<u32>(record, 12) - load<u32>(record);
  const from = laneBlock[L] << 6;
  const to = from + 64;
  if (to <= cut) {
    lanePointer[L] = start + from;
    return;
  }
  if (from >= cut && to <= length) {
    lanePointer[L] = start + from + HOLE;
    return;
  }
  const block = LANE_BLOCK + (<usize>L << 6);
  memory.fill(block, 0, 64);
  if (from < length) copyMessage(block, record, from, to < length ? to : length);
  if (length >= from && length < to) store<u8>(block + length - from, 0x80);
  if (laneBlock[L] == laneBlocks[L] - 1) store<u64>(block + 56, bswap<u64>(<u64>length << 3));
  lanePointer[L] = block;
}

function startLane(L: i32, row: i32, records: usize): void {
  laneRow[L] = row;
  laneBlock[L] = 0;
  const record = records + <usize>row * RECORD_BYTES;
  const length = load<u32>(record, 4) - load<u32>(record) - HOLE;
  laneBlocks[L] = ((length + 8) >> 6) + 1;
  for (let i = 0; i < 8; i++) store<u32>(STATE + (<usize>i << 4) + (<usize>L << 2), IV[i]);
}

@inline function bigSigma0(x: v128): v128 {
  return v128.xor(v128.xor(rotr(x, 2), rotr(x, 13)), rotr(x, 22));
}

@inline function bigSigma1(x: v128): v128 {
  return v128.xor(v128.xor(rotr(x, 6), rotr(x, 11)), rotr(x, 25));
}

/** Ch(e, f, g): f where e has a 1, else g. */
@inline function choose(e: v128, f: v128, g: v128): v128 {
  return v128.xor(g, v128.and(e, v128.xor(f, g)));
}

/**
 * K[j] + W[j] of the four lanes, W[j] computed (and kept) from the earlier words for j >= 16:
 * the message schedule runs alongside the rounds, whose chain of dependencies leaves room for it.
 */
@inline function kwAt(j: usize): v128 {
  if (j < 16) return i32x4.add(v128.load(K_TABLE + (j << 4)), v128.load(W_BUF + (j << 4)));
  const w15 = v128.load(W_BUF + ((j - 15) << 4));
  const w2 = v128.load(W_BUF + ((j - 2) << 4));
  const s0 = v128.xor(v128.xor(rotr(w15, 7), rotr(w15, 18)), i32x4.shr_u(w15, 3));
  const s1 = v128.xor(v128.xor(rotr(w2, 17), rotr(w2, 19)), i32x4.shr_u(w2, 10));
  const w = i32x4.add(
    i32x4.add(v128.load(W_BUF + ((j - 16) << 4)), s0),
    i32x4.add(v128.load(W_BUF + ((j - 7) << 4)), s1),
  );
  v128.store(W_BUF + (j << 4), w);
  return i32x4.add(v128.load(K_TABLE + (j << 4)), w);
}

function compress(): void {
  const p0 = unchecked(lanePointer[0]);
  const p1 = unchecked(lanePointer[1]);
  const p2 = unchecked(lanePointer[2]);
  const p3 = unchecked(lanePointer[3]);
  for (let j: usize = 0; j < 64; j += 4) {
    let w = v128.load32_zero(p0 + j);
    w = v128.load32_lane(p1 + j, w, 1);
    w = v128.load32_lane(p2 + j, w, 2);
    w = v128.load32_lane(p3 + j, w, 3);
    v128.store(W_BUF + (j << 2), i8x16.swizzle(w, BSWAP));
  }
  let a = v128.load(STATE), b = v128.load(STATE, 16), c = v128.load(STATE, 32);
  let d = v128.load(STATE, 48), e = v128.load(STATE, 64), f = v128.load(STATE, 80);
  let g = v128.load(STATE, 96), h = v128.load(STATE, 112);
  // Eight rounds a turn, the roles of a..h rotating, so no value is moved between rounds; Maj
  // reuses the previous round's a ^ b (Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c))).
  let bc = v128.xor(b, c);
  let t1: v128, ab: v128;
  for (let j: usize = 0; j < 64; j += 8) {
    t1 = i32x4.add(i32x4.add(h, bigSigma1(e)), i32x4.add(choose(e, f, g), kwAt(j + 0)));
    d = i32x4.add(d, t1);
    ab = v128.xor(a, b);
    h = i32x4.add(i32x4.add(t1, bigSigma0(a)), v128.xor(b, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(g, bigSigma1(d)), i32x4.add(choose(d, e, f), kwAt(j + 1)));
    c = i32x4.add(c, t1);
    ab = v128.xor(h, a);
    g = i32x4.add(i32x4.add(t1, bigSigma0(h)), v128.xor(a, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(f, bigSigma1(c)), i32x4.add(choose(c, d, e), kwAt(j + 2)));
    b = i32x4.add(b, t1);
    ab = v128.xor(g, h);
    f = i32x4.add(i32x4.add(t1, bigSigma0(g)), v128.xor(h, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(e, bigSigma1(b)), i32x4.add(choose(b, c, d), kwAt(j + 3)));
    a = i32x4.add(a, t1);
    ab = v128.xor(f, g);
    e = i32x4.add(i32x4.add(t1, bigSigma0(f)), v128.xor(g, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(d, bigSigma1(a)), i32x4.add(choose(a, b, c), kwAt(j + 4)));
    h = i32x4.add(h, t1);
    ab = v128.xor(e, f);
    d = i32x4.add(i32x4.add(t1, bigSigma0(e)), v128.xor(f, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(c, bigSigma1(h)), i32x4.add(choose(h, a, b), kwAt(j + 5)));
    g = i32x4.add(g, t1);
    ab = v128.xor(d, e);
    c = i32x4.add(i32x4.add(t1, bigSigma0(d)), v128.xor(e, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(b, bigSigma1(g)), i32x4.add(choose(g, h, a), kwAt(j + 6)));
    f = i32x4.add(f, t1);
    ab = v128.xor(c, d);
    b = i32x4.add(i32x4.add(t1, bigSigma0(c)), v128.xor(d, v128.and(ab, bc)));
    bc = ab;
    t1 = i32x4.add(i32x4.add(a, bigSigma1(f)), i32x4.add(choose(f, g, h), kwAt(j + 7)));
    e = i32x4.add(e, t1);
    ab = v128.xor(b, c);
    a = i32x4.add(i32x4.add(t1, bigSigma0(b)), v128.xor(c, v128.and(ab, bc)));
    bc = ab;
  }
  v128.store(STATE, i32x4.add(v128.load(STATE), a));
  v128.store(STATE, i32x4.add(v128.load(STATE, 16), b), 16);
  v128.store(STATE, i32x4.add(v128.load(STATE, 32), c), 32);
  v128.store(STATE, i32x4.add(v128.load(STATE, 48), d), 48);
  v128.store(STATE, i32x4.add(v128.load(STATE, 64), e), 64);
  v128.store(STATE, i32x4.add(v128.load(STATE, 80), f), 80);
  v128.store(STATE, i32x4.add(v128.load(STATE, 96), g), 96);
  v128.store(STATE, i32x4.add(v128.load(STATE, 112), h), 112);
}

/** Hash rows [0, n) and return the first whose digest is not its claimed hash (n when none). */
function hashRows(n: i32, records: usize, claimed: usize): i32 {
  let firstBad = n;
  let next = 0;
  let active = 0;
  for (let L = 0; L < 4; L++) {
    if (next < n) {
      startLane(L, next++, records);
      active++;
    } else {
      laneRow[L] = -1;
    }
  }
  while (active > 0) {
    for (let L = 0; L < 4; L++) {
      if (laneRow[L] >= 0) pointLane(L, records);
      else lanePointer[L] = LANE_BLOCK; // an idle lane hashes scratch; its result is dropped
    }
    compress();
    for (let L = 0; L < 4; L++) {
      const row = laneRow[L];
      if (row < 0) continue;
      if (++laneBlock[L] < laneBlocks[L]) continue;
      const want = claimed + (<usize>row << 5);
      let diff: u32 = 0;
      for (let i = 0; i < 8; i++) {
        const word = bswap<u32>(load<u32>(STATE + (<usize>i << 4) + (<usize>L << 2)));
        diff |= word ^ load<u32>(want + (<usize>i << 2));
      }
      if (diff != 0 && row < firstBad) firstBad = row;
      if (next < n) startLane(L, next++, records);
      else {
        laneRow[L] = -1;
        active--;
      }
    }
  }
  return firstBad;
}

/**
 * Prove the leading lines of the window [WINDOW, WINDOW + length) (whole lines, each ending in
 * a newline, followed by 64 bytes of slack), the first at `seq`, chained onto HEAD. Per proven
 * line it writes a 32-byte record at `records` — line start, newline, data start and end (window
 * offsets); type id | need << 8; then offsets into `compact` where the row's unregistered type
 * name (quoted) starts, where what the reader needs of it starts (all of data, or its task_id
 * quoted, per NEEDS or `otherwise`) and where that ends — and its hash at `claimed` (32 bytes
 * each); moves HEAD to the last proven hash and returns how many lines were proven (at most
 * maxLines). Only the wanted text reaches JavaScript, not the window.
 */
export function scan(
  length: u32,
  seq: f64,
  maxLines: i32,
  records: usize,
  claimed: usize,
  compact: usize,
  otherwise: u8,
): i32 {
  const end = WINDOW + <usize>length;
  let p = WINDOW;
  let n = 0;
  let prev = HEAD;
  compactBase = compact;
  compactAt = compact;
  otherwiseNeed = otherwise;
  while (p < end && n < maxLines) {
    const record = records + <usize>n * RECORD_BYTES;
    const hash = claimed + (<usize>n << 5);
    const next = proveLine(p, <i64>seq + <i64>n, prev, record, hash);
    if (next == 0) break;
    prev = hashDigits(record);
    n++;
    p = next;
  }
  n = hashRows(n, records, claimed);
  if (n > 0) memory.copy(HEAD, hashDigits(records + <usize>(n - 1) * RECORD_BYTES), 64);
  return n;
}
