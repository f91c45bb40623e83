type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One Server-Sent Event: its `event:` name (undefined for plain data events) and its parsed `data:`. */
export interface SseEvent {
  event?: string;
  /** The event's `id:` (its position in the task's history), when it has one. */
  id?: string;
  data: Json;
  /** The event's lines exactly as received (comments left out). */
  raw: string;
}

/**
 * A JSON-RPC call answered with a stream, read event by event. `next()` resolves with the next
 * event, or undefined once the server closed the stream; `close()` hangs up as a client would.
 */
export interface SseStream {
  status: number;
  headers: Headers;
  /** The body of a response that was not an event stream (a plain JSON-RPC answer). */
  json?: Json;
  /** Every comment line seen so far (without the leading colon). */
  comments: string[];
  next(): Promise<SseEvent | undefined>;
  /** Reads until the server closes the stream; returns every remaining event. */
  rest(): Promise<SseEvent[]>;
  close(): void;
}

/** A POST of `body` answered with a stream; with `body` undefined, a GET (the admin event stream). */
export async function openSse(url: string, headers: Record<string, string>, body: unknown): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    ...(body === undefined
      ? { method: 'GET', headers: { accept: 'text/event-stream', ...headers } }
      : { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body: JSON.stringify(body) }),
    signal: controller.signal,
  });
  const comments: string[] = [];
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const json = (await response.json()) as Json;
    return {
      status: response.status,
      headers: response.headers,
      json,
      comments,
      next: async () => undefined,
      rest: async () => [],
      close: () => controller.abort(),
    };
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const next = async (): Promise<SseEvent | undefined> => {
    for (;;) {
      buffer = buffer.replace(/\r\n/g, '\n');
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event: string | undefined;
        let id: string | undefined;
        const data: string[] = [];
        const lines: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
            continue;
          }
          lines.push(line);
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (data.length === 0) continue;
        return {
          ...(event !== undefined ? { event } : {}),
          ...(id !== undefined ? { id } : {}),
          data: JSON.parse(data.join('\n')) as Json,
          raw: lines.join('\n'),
        };
      }
      if (ended) return undefined;
      const chunk = await reader.read();
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    comments,
    next,
    rest: async () => {
      const events: SseEvent[] = [];
      for (let event = await next(); event !== undefined; event = await next()) events.push(event);
      return events;
    },
    close: () => controller.abort(),
  };
}
