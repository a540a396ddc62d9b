/** RTP media for calls: packets, G.711, the shared send clock, sessions, SDP offer/answer. */
export * from './audibleSamples.js';
export * from './dtmf.js';
export * from './g711.js';
export * from './goertzel.js';
export * from './inbandDtmf.js';
export * from './jitterBuffer.js';
export * from './latencyHistogram.js';
export * from './mediaClock.js';
export * from './mediaError.js';
export * from './outgoingAudio.js';
export * from './portAllocator.js';
export * from './rtpPacket.js';
export * from './rtpSession.js';
export * from './sdes.js';
export * from './sdp.js';
export * from './srtp.js';
