// The suite's vendor fakes, re-exported for bench:voice (bundled to bench/.fakes.mjs with esbuild).

export { startFakeOpenAiServer } from '../src/voice/providers/testing/fakeOpenAiServer.js';
export { startFakeDeepgram } from '../test/fakes/deepgramLiveServer.js';
export { startFakeElevenLabs } from '../test/fakes/elevenLabsStreamInputServer.js';
export { attachFakeRealtime } from '../test/fakes/openAiRealtimeServer.js';
