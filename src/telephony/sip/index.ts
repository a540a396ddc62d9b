export type {
  AnsweredInfo,
  CallEnded,
  CallFailure,
  CallFailureCause,
  CallOutcome,
  InviteOptions,
  OutgoingCallEvents,
  OutgoingCallState,
  ProvisionalInfo,
  SipAddressInput,
} from './callTypes.js';
export { defaultRingTimeoutMs } from './callTypes.js';
export type { DialogInit } from './dialog.js';
export type { StoredDialogByeOptions, StoredDialogByeResult } from './dialogBye.js';
export type { DigestAlgorithm, DigestChallenge, DigestCredentials } from './digest.js';
export {
  buildDigestAuthorization,
  buildDigestChallenge,
  computeDigestResponse,
  parseDigestChallenge,
  selectDigestChallenge,
  verifyDigestAuthorization,
} from './digest.js';
export type { CSeq, NameAddr, SipParams, SipUri, Via } from './grammar.js';
export { formatNameAddr, formatSipUri, parseNameAddr, parseSipUri } from './grammar.js';
export type { IncomingCallEnded, IncomingCallEvents, IncomingCallState } from './incomingCall.js';
export { IncomingCall } from './incomingCall.js';
export type { OfferAnswer } from './inDialog.js';
export type {
  ParsedSipMessage,
  ParsedSipRequest,
  ParsedSipResponse,
  ParseResult,
  SipHeader,
  SipMessage,
  SipRequest,
  SipResponse,
} from './message.js';
export { headerValue, headerValues, parseSipMessage, serializeSipMessage } from './message.js';
export { OutgoingCall } from './outgoingCall.js';
export type { TransferResult } from './referTransfer.js';
export type { RegistrationOptions, RegistrationState } from './registration.js';
export { SipRegistration } from './registration.js';
export type { SipTimerSettings, TimerScheduler } from './timers.js';
export { defaultSipTimerSettings } from './timers.js';
export type { NetworkTarget, SipTransportName, TlsPeerOptions } from './transport.js';
export type { IncomingCallHandler, SipUserAgentOptions } from './userAgent.js';
export { SipUserAgent } from './userAgent.js';
