import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded request to the fake chat-completions server. */
export interface RecordedRequest {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: {
    messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
    stream?: boolean;
    tools?: unknown;
  };
}

/** What the fake server does for the n-th request. */
export type Responder = (req: RecordedRequest, res: http.ServerResponse, index: number) => void;

/** An in-process HTTP server on 127.0.0.1 that speaks just enough chat-completions SSE. */
export interface FakeOpenAIServer {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeOpenAI(responders: Responder[]): Promise<FakeOpenAIServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        // The model list Cellmate reads for a window (CTX-1): this server lists none; not a chat request.
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        return;
      }
      const recorded: RecordedRequest = { url: req.url ?? '', headers: req.headers, body: JSON.parse(raw || '{}') };
      const index = requests.push(recorded) - 1;
      const responder = responders[index];
      if (!responder) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":{"message":"no more scripted responses"}}');
        return;
      }
      responder(recorded, res, index);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })
  };
}

/** A chat.completion.chunk with the given delta. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }]
  })}\n\n`;
}

/** Responds with SSE frames; `end: false` keeps the connection open after the last one. */
export function sse(frames: string[], options: { end?: boolean } = {}): Responder {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const frame of frames) res.write(frame);
    if (options.end !== false) res.end();
  };
}
