// The vendor fakes of bench:voice, in a process of their own (so their CPU is not the service's):
// Deepgram live STT answering a Finalize after FINAL_MS, an OpenAI-compatible chat model whose first
// token comes FIRST_TOKEN_MS after the request and the next ones at TOKENS_PER_S, ElevenLabs
// stream-input answering its first audio after FIRST_AUDIO_MS and then at real-time pace (100 ms of
// audio every 100 ms), and OpenAI Realtime on the chat server's port (its server VAD ends the
// callee's turn after its 500 ms silence window; the reply's first audio REALTIME_FIRST_AUDIO_MS
// later, then at real-time pace). Prints one JSON line with their base URLs, then serves until killed.
// The fakes are the suite's (test/fakes/*.ts), bundled by bench/voice.mjs with esbuild.
import {
  attachFakeRealtime,
  startFakeDeepgram,
  startFakeElevenLabs,
  startFakeOpenAiServer,
} from './.fakes.mjs';

const deepgram = await startFakeDeepgram({
  apiKey: 'bench-deepgram',
  // The sandbox person's answer, in two parts with its pause between them: the interim results
  // say "Yes." in the pause, then "Yes. That works." (Deepgram punctuates).
  transcripts: ['Yes. | That works.'],
  finalizeDelayMs: Number(process.env.FINAL_MS ?? 150),
  endpointingMs: 10_000, // the final answers the Finalize, as with a client that finalizes at turn end
  idleCloseMs: 600_000,
});
const elevenLabs = await startFakeElevenLabs({
  apiKey: 'bench-elevenlabs',
  voiceIds: ['bench-voice'],
  firstAudioDelayMs: Number(process.env.FIRST_AUDIO_MS ?? 120),
  // 800 bytes of μ-law (100 ms) a chunk, one every 100 ms: the voice arrives as fast as it plays.
  chunkIntervalMs: 100,
});
// One token per chunk: "Okay, thank you." is the first sentence (4 tokens), then a question.
const replyTokens = ['Okay', ',', ' thank', ' you.', ' Is', ' there', ' anything', ' else', '?'];
const llm = await startFakeOpenAiServer({
  apiKey: 'bench-llm',
  chatStreamDeltas: replyTokens.map((token, index) => ({
    delta: index === 0 ? { role: 'assistant', content: token } : { content: token },
    ...(index === replyTokens.length - 1 ? { finishReason: 'stop' } : {}),
  })),
  responseDelayMs: Number(process.env.FIRST_TOKEN_MS ?? 250),
  chatDeltaIntervalMs: 1000 / Number(process.env.TOKENS_PER_S ?? 50),
});
const realtime = attachFakeRealtime(llm.httpServer, {
  apiKey: 'bench-llm',
  replies: [{ text: 'Hello, this is the clinic.' }, { text: 'Okay, thank you. Is there anything else?' }],
  calleeTranscripts: ['Yes, that works.'],
  firstAudioDelayMs: Number(process.env.REALTIME_FIRST_AUDIO_MS ?? 300),
  chunkIntervalMs: 100,
});
console.log(JSON.stringify({ deepgram: deepgram.baseUrl, elevenLabs: elevenLabs.baseUrl, llm: llm.baseUrl }));
process.on('SIGTERM', async () => {
  realtime.close();
  await Promise.all([deepgram.close(), elevenLabs.close(), llm.close()]);
  process.exit(0);
});
