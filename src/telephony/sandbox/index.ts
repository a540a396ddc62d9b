/** The sandbox carrier: personas on loopback, reached over real SIP and RTP. */
export type { InviteLog, InviteLogEntry } from './inviteLog.js';
export { MemoryInviteLog } from './inviteLog.js';
export type { CalleePersona, PersonaMind } from './personaCallee.js';
export type { PersonaTiming, SandboxPersona, SandboxPersonaName } from './personas.js';
export {
  defaultPersonaTiming,
  defaultSandboxPersona,
  personMaxReplies,
  sandboxPersonaFor,
  sandboxPersonas,
} from './personas.js';
export type { SandboxVoice } from './sandboxAudio.js';
export { beepTone, createToneVoice, frameRms, replyTone, speechLikeTone } from './sandboxAudio.js';
export { sandboxCallIdHeader, sandboxVariablesHeader } from './sandboxCall.js';
export type { SandboxCarrierOptions } from './sandboxCarrier.js';
export { SandboxCarrier } from './sandboxCarrier.js';
export type { CalleeScript, CalleeScriptTurn, CalleeSpeech } from './scriptedCallee.js';
export type { SpeechPauseDetectorOptions } from './speechPauseDetector.js';
export { SpeechPauseDetector } from './speechPauseDetector.js';
