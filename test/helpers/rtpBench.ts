import type { Socket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { MediaClock } from '../../src/telephony/rtp/mediaClock.js';
import { PortAllocator } from '../../src/telephony/rtp/portAllocator.js';
import { RtpSession, type RtpSessionOptions } from '../../src/telephony/rtp/rtpSession.js';

/**
 * RTP sessions for a test file, on loopback, in a port range of the file's own (files run in
 * parallel); everything opened is closed after each test. Call once at the top of the file.
 */
export function rtpTestBench(minPort: number) {
  const logger = pino({ level: 'silent' });
  const clock = new MediaClock({ logger });
  const ports = new PortAllocator({ minPort, maxPort: minPort + 998 });
  const opened: RtpSession[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    for (const s of sockets.splice(0)) s.close();
  });
  async function openSession(extra: Partial<RtpSessionOptions> = {}): Promise<RtpSession> {
    const session = await RtpSession.open({ logger, clock, ports, bindAddress: '127.0.0.1', ...extra });
    opened.push(session);
    return session;
  }
  /** Closes `socket` after the test. */
  const closeLater = (socket: Socket): void => {
    sockets.push(socket);
  };
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  return { logger, clock, ports, openSession, closeLater, sleep };
}
