import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 free at the moment of asking, for a child process told to listen on it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
