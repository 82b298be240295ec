/**
 * The plumbing the provider stand-ins share: a loopback server on port 0 that records every
 * request (method, path with query, headers, parsed JSON body) and an SSE frame writer.
 */

/** One request a stand-in received. */
export interface RecordedRequest {
  method: string;
  /** Path without the query, e.g. `/v1beta/models/x:streamGenerateContent`. */
  path: string;
  /** The query with its `?`, e.g. `?alt=sse`, or "". */
  search: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A running stand-in; dispose it to stop the server. */
export interface FakeServer extends AsyncDisposable {
  url: string;
  requests: RecordedRequest[];
}

/** One Server-Sent Events frame; `event` is omitted when undefined (Gemini sends data only). */
export function sseFrame(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
}

/** An SSE response of `frames`. */
export function sseResponse(frames: string[]): Response {
  return new Response(frames.join(""), {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

/** Serve `handle` on 127.0.0.1, port 0, recording every request before it is handled. */
export function startRecordingServer(
  handle: (req: RecordedRequest) => Response | Promise<Response>,
): FakeServer {
  const requests: RecordedRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const raw = await req.text();
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch { /* keep the raw text */ }
      const recorded = {
        method: req.method,
        path: url.pathname,
        search: url.search,
        headers: Object.fromEntries(req.headers),
        body,
      };
      requests.push(recorded);
      return await handle(recorded);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
