import type { AnsweredBy } from '../domain/callStatus.js';
import type { CallRecord } from '../domain/records.js';
import {
  callAnsweredEvent,
  callRingingEvent,
  callTransferredEvent,
  type TransferDetail,
} from '../domain/statusEvents.js';
import type { StatusEventWriter } from '../webhooks/statusEventWriter.js';

/**
 * One call's status events, in the order the call lives them: `call.ringing` at the first 180/183,
 * `call.answered` once the answering party is decided (a person or a machine, from the detector, a
 * reply in words or the agent) — or, if the call ends first, just before its `call.completed`, with
 * what was known, the same `answered_by` the call's record and `metrics.answering_machine` carry —
 * and `call.transferred` with a transfer's outcome (at once when it connected, else at the end for
 * the last attempt). Each is written once; whether it is
 * sent is the endpoint's choice (the store decides).
 */
export class CallStatusEvents {
  private answeredAtIso: string | null = null;
  private answeredWritten: Promise<unknown> | null = null;
  private transferWritten: Promise<unknown> | null = null;
  private lastFailedTransfer: { transfer: TransferDetail; atIso: string } | null = null;

  constructor(
    private readonly call: CallRecord,
    private readonly writer: StatusEventWriter,
  ) {}

  ringing(atIso: string): void {
    void this.writer.write(this.call.accountId, 'call.ringing', { callId: this.call.id }, (event) =>
      callRingingEvent(this.call, { ...event, ringingAt: atIso }),
    );
  }

  /** The 200 OK: the event waits for the answering party (`decided`) or the end of the call. */
  answered(atIso: string): void {
    this.answeredAtIso = atIso;
  }

  /**
   * The answering party is known (the first person or machine counts). An `unknown` (a silent
   * start) is no decision yet: a person may still speak, and the call's record would then say
   * `human` while its event said `unknown`; the event waits for them or for the end of the call.
   */
  decided(answeredBy: AnsweredBy): void {
    if (answeredBy !== 'unknown') this.write(answeredBy);
  }

  private write(answeredBy: AnsweredBy): void {
    const answeredAt = this.answeredAtIso;
    if (answeredAt === null || this.answeredWritten) return;
    this.answeredWritten = this.writer.write(
      this.call.accountId,
      'call.answered',
      { callId: this.call.id },
      (event) => callAnsweredEvent(this.call, { ...event, answeredAt, answeredBy }),
    );
  }

  /**
   * A transfer attempt ended. One `call.transferred` per call: a connected transfer is written at
   * once; an attempt that did not connect waits, since the agent may try again — the last one is
   * written just before the call's end (`beforeEnd`).
   */
  transferred(transfer: TransferDetail): void {
    if (this.transferWritten) return;
    const atIso = new Date().toISOString();
    if (transfer.outcome !== 'connected') {
      this.lastFailedTransfer = { transfer, atIso };
      return;
    }
    this.writeTransferred(transfer, atIso);
  }

  private writeTransferred(transfer: TransferDetail, transferredAt: string): void {
    this.transferWritten = this.writer.write(
      this.call.accountId,
      'call.transferred',
      { callId: this.call.id },
      (event) => callTransferredEvent(this.call, { ...event, transferredAt, transfer }),
    );
  }

  /**
   * Before the call's end is written: an answered call whose party was never decided says so now,
   * and a transfer that never connected says how its last attempt went.
   */
  async beforeEnd(answeredBy: AnsweredBy | null): Promise<void> {
    if (answeredBy !== null) this.write(answeredBy);
    const failed = this.lastFailedTransfer;
    if (failed && !this.transferWritten) this.writeTransferred(failed.transfer, failed.atIso);
    await Promise.all([this.answeredWritten, this.transferWritten]);
  }
}
