/**
 * What a vendor fake does wrong, and when: the faults the call's liveness rule must survive, at any
 * point of a streamed answer. Each fake acts a fault out in its own vendor's wire protocol (its error
 * message, its close codes, its idea of a frame); this file only says which and when.
 */

export type StreamFaultKind =
  /** Stops sending with the socket (or response) left open: nothing more ever comes. */
  | 'stall'
  /** Sends a frame that is not the protocol's (an HTML error page through a proxy), then stalls. */
  | 'garbage'
  /** Sends a frame that is not the protocol's, then goes on with the audio as if nothing happened. */
  | 'garbage_then_audio'
  /** Sends the vendor's own error message (and closes where the vendor does). */
  | 'error'
  /** Closes the connection as the vendor does on an internal failure (1011). */
  | 'close';

export interface StreamFault {
  kind: StreamFaultKind;
  /** After this many audio chunks of the answer: 0 is before the first audio. */
  afterChunks: number;
  /** Only answers to a text containing this (a sentence, the greeting); absent: every answer. */
  whenTextIncludes?: string;
  /** At most this many times (then the vendor is healthy again); absent: every time. */
  times?: number;
}

/** The fault for an answer to `text`, counting it as used; null when the answer goes well. */
export function takeFault(faults: StreamFault[], text: string): StreamFault | null {
  for (const fault of faults) {
    if (fault.whenTextIncludes !== undefined && !text.includes(fault.whenTextIncludes)) continue;
    if (fault.times !== undefined) {
      if (fault.times <= 0) continue;
      fault.times--;
    }
    return fault;
  }
  return null;
}

/** What a proxy in front of a vendor sends when the vendor behind it is down. */
export const garbageFrame = '<html><body><h1>502 Bad Gateway</h1></body></html>';
