// Listening and stopping: the address a server got (an asked-for port of 0 is any free one), and a stop that does
// not wait for kept-alive connections to time out.
import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';

/** Listens on host:port; resolves to the port got and the origin by the address bound (an IPv6 one in brackets). */
export async function listen(server: NetServer, host: string, port: number, scheme: 'http' | 'https' = 'http'): Promise<{ origin: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { origin: `${scheme}://${hostPart}:${address.port}`, port: address.port };
}

/** Stops listening and closes every connection, idle or not. */
export function close(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
