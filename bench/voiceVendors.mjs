// The vendor fakes of bench:voice, in a process of their own (so their CPU is not the service's):
// Deepgram live STT answering a Finalize after FINAL_MS, an OpenAI-compatible chat model whose first
// token comes FIRST_TOKEN_MS after the request and the next ones at TOKENS_PER_S, ElevenLabs
// stream-input answering its first audio after FIRST_AUDIO_MS. Prints one JSON line with their base
// URLs, then serves until killed.
// The fakes are the suite's (test/fakes/*.ts), bundled by bench/voice.mjs with esbuild.
import { startFakeDeepgram, startFakeElevenLabs, startFakeOpenAiServer } from './.fakes.mjs';

const deepgram = await startFakeDeepgram({
  apiKey: 'bench-deepgram',
  transcripts: ['yes that works'],
  finalizeDelayMs: Number(process.env.FINAL_MS ?? 150),
  endpointingMs: 10_000, // the final answers the Finalize, as with a client that finalizes at turn end
  idleCloseMs: 600_000,
});
const elevenLabs = await startFakeElevenLabs({
  apiKey: 'bench-elevenlabs',
  voiceIds: ['bench-voice'],
  firstAudioDelayMs: Number(process.env.FIRST_AUDIO_MS ?? 120),
  chunkIntervalMs: 20,
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
console.log(JSON.stringify({ deepgram: deepgram.baseUrl, elevenLabs: elevenLabs.baseUrl, llm: llm.baseUrl }));
process.on('SIGTERM', async () => {
  await Promise.all([deepgram.close(), elevenLabs.close(), llm.close()]);
  process.exit(0);
});
