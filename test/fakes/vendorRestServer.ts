import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebSocketServer } from 'ws';

/**
 * The HTTP side of a socket vendor's fake: its REST routes (the cheap authenticated reads a key
 * test makes) on the same address as its WebSocket, which is attached with `{ server }`.
 */
export interface VendorRestServer {
  http: Server;
  port: number;
  /** Terminates the sockets, then closes the HTTP server and its connections. */
  close(sockets: WebSocketServer): Promise<void>;
}

export type RestRoute = (request: IncomingMessage) => { status: number; body: unknown };

export async function startVendorRestServer(route: RestRoute): Promise<VendorRestServer> {
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    const { status, body } = route(request);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    http,
    port: (http.address() as AddressInfo).port,
    close: (sockets) =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
