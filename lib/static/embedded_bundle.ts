// Filled in by scripts/bundle.ts while it builds the single-file artefact, then restored:
// the artefact serves the board's island bundle from here, having no islands/ beside it.
/** The prebuilt island bundle inside a single-file artefact; undefined when running from source. */
export const EMBEDDED_BUNDLE: { fileName: string; js: string } | undefined = undefined;
