/**
 * Holding the document's `load` event until the page shows something true (browser-side).
 * Headless screenshots (`chromium --headless --screenshot`), `--dump-dom` and print-to-PDF
 * capture the page when `load` fires; the board's data arrives from the JSON API after the
 * bundle runs, and fetches do not delay `load`. A document's `load` waits for its frames, and a
 * frame whose document was opened with `document.open()` is loading until `document.close()`:
 * so one hidden, empty frame kept open while any hold is taken — the board app's until its
 * first answer is on screen, each panel's until its first fetch answered — holds `load`
 * exactly that long, and never longer than {@link MAX_LOAD_HOLD_MS}.
 */

/** How long the page may hold `load` at most (a server that does not answer). */
const MAX_LOAD_HOLD_MS = 10_000;

/** The open frame and how many holds keep it open (one document per page). */
let held: { frame: HTMLIFrameElement; timer: ReturnType<typeof setTimeout> } | undefined;
let holds = 0;

function letGo(): void {
  if (!held) return;
  clearTimeout(held.timer);
  held.frame.contentDocument?.close();
  held.frame.remove();
  held = undefined;
  holds = 0;
}

/**
 * Hold `load`; the returned function lets this hold go (calling it again does nothing). `load`
 * fires once every hold is let go.
 */
export function holdLoadEvent(): () => void {
  // Nothing to hold in a server render, or once the document has loaded.
  if (typeof document === "undefined" || document.readyState === "complete") return () => {};
  if (!held) {
    const frame = document.createElement("iframe");
    frame.hidden = true;
    frame.tabIndex = -1;
    frame.setAttribute("aria-hidden", "true");
    frame.dataset.loadHold = "";
    document.body.append(frame);
    frame.contentDocument?.open();
    held = { frame, timer: setTimeout(letGo, MAX_LOAD_HOLD_MS) };
  }
  holds++;
  const mine = held;
  let released = false;
  return () => {
    if (released || held !== mine) return; // a timed-out frame was let go already
    released = true;
    if (--holds <= 0) letGo();
  };
}
